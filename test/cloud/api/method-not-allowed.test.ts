import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { expectErrorBody } from './api-helpers.ts'

/** Issue 7, point 9: a wrong method on an existing path is a 405 with `Allow` (RFC 9110 §15.5.6), not a 404. */
describe('a wrong method on an existing path', () => {
  let cloud: TestCloud
  beforeAll(async () => {
    cloud = await startTestCloud()
  })
  afterAll(() => cloud.close())

  it.each([
    ['PUT', '/api/v1/print-jobs', 'GET, HEAD, POST'],
    ['DELETE', '/api/v1/print-jobs/0b3ee3a4-8f3d-4a38-9c2b-6f2d3c1b6f10', 'GET, HEAD'],
    ['GET', '/api/v1/documents', 'POST'],
    ['GET', '/oauth/token', 'POST'],
    ['PATCH', '/api/v1/printers', 'GET, HEAD'],
  ])('%s %s → 405 with Allow: %s', async (method, url, allow) => {
    const res = await cloud.app.inject({ method: method as 'GET', url })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe(allow)
    expectErrorBody(res.json(), 'method_not_allowed', { allowed_methods: allow.split(', ') })
  })

  it('still answers 404 for a path no route has', async () => {
    const res = await cloud.app.inject({ method: 'PUT', url: '/api/v1/nothing-here' })
    expect(res.statusCode).toBe(404)
    expectErrorBody(res.json(), 'not_found')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

const ROUTES = [
  ['POST', '/oauth/token'],
  ['GET', '/api/v1/agents'],
  ['GET', '/api/v1/printers'],
  ['POST', '/api/v1/documents'],
  ['POST', '/api/v1/print-jobs'],
  ['POST', '/api/v1/print-jobs/from-url'],
  ['POST', '/api/v1/print-jobs/from-base64'],
  ['GET', '/api/v1/print-jobs'],
  ['GET', '/api/v1/print-jobs/00000000-0000-4000-8000-000000000000'],
] as const

const BODIES: [string, string][] = [
  ['application/json', 'null'],
  ['application/json', '[]'],
  ['application/json', '"text"'],
  ['application/json', '12'],
  ['application/json', '{"__proto__": {"copies": 5}, "constructor": {"prototype": {}}}'],
  ['application/json', '{"printer_id": {"$gt": ""}, "document_id": ["a"], "copies": 1e309}'],
  ['application/json', `{"document_base64": ${JSON.stringify('A'.repeat(10_000))}, "printer_id": null}`],
  ['application/json', `{"copies": ${'['.repeat(5000)}${']'.repeat(5000)}}`],
  [
    'application/json',
    '{"document_url": "https://[::1", "printer_id": "00000000-0000-4000-8000-000000000000"}',
  ],
  ['application/json', '\xff\xfe\x00{'],
  ['application/x-www-form-urlencoded', 'grant_type=client_credentials&client_id=%ZZ&client_secret[]=1'],
  ['application/x-www-form-urlencoded', 'a=1&a=2&a=3&scope=%00'],
  [
    'multipart/form-data; boundary=x',
    '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nunterminated',
  ],
  ['multipart/form-data', 'no boundary at all'],
  ['text/plain', 'hello'],
  ['application/octet-stream', '\x00\x01\x02'],
]

describe('malformed input never produces a 500', () => {
  let cloud: TestCloud
  let account: TestAccount
  beforeAll(async () => {
    cloud = await startTestCloud()
    account = await cloud.createAccount()
  })
  afterAll(() => cloud.close())

  it.each(ROUTES)(
    '%s %s answers every malformed body with a 4xx in the spec error body',
    async (method, url) => {
      for (const [contentType, payload] of BODIES) {
        const res = await cloud.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${await account.token()}`, 'content-type': contentType },
          payload: method === 'GET' ? undefined : Buffer.from(payload, 'latin1'),
        })
        expect(res.statusCode, `${contentType} ${payload.slice(0, 40)}`).toBeLessThan(500)
        if (res.statusCode >= 400) {
          expect(Object.keys(res.json()).sort()).toEqual(
            expect.arrayContaining(['error', 'error_code', 'message']),
          )
        }
      }
    },
  )

  it.each([
    ['/api/v1/print-jobs?limit=1e3&limit=2'],
    ['/api/v1/print-jobs?cursor=%ZZ'],
    ['/api/v1/print-jobs?status[]=pending'],
    ['/api/v1/printers?limit=-1'],
    ['/api/v1/print-jobs/%E0%A4%A'],
    ['/api/v1/print-jobs/..%2f..%2fetc%2fpasswd'],
  ])('GET %s answers a 4xx', async (url) => {
    const res = await cloud.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${await account.token()}` },
    })
    expect(res.statusCode).toBeGreaterThanOrEqual(400)
    expect(res.statusCode).toBeLessThan(500)
    expect(res.headers['x-request-id']).toBeTruthy()
  })

  it.each([
    ['Bearer'],
    ['Bearer '],
    ['Bearer a b'],
    [`Bearer ${'x'.repeat(10_000)}`],
    ['bearer\tabc'],
    ['Digest abc'],
  ])('Authorization %j is a 401, not a 500', async (authorization) => {
    const res = await cloud.app.inject({ method: 'GET', url: '/api/v1/printers', headers: { authorization } })
    expect(res.statusCode).toBe(401)
    expect(res.json().error_code).toBe('invalid_token')
  })

  it('answers an unexpected failure with a 500 that reveals nothing internal', async () => {
    const broken = await startTestCloud()
    const token = await (await broken.createAccount()).token()
    await broken.storage.close()
    const res = await broken.app.inject({
      method: 'GET',
      url: '/api/v1/printers',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.statusCode).toBe(500)
    expect(res.json()).toEqual({
      error: 'internal_error',
      error_code: 'internal_error',
      message: 'An unexpected error occurred.',
    })
    expect(res.headers['x-request-id']).toBeTruthy()
    await broken.close()
  })
})

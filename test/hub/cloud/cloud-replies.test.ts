import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CloudClient, CloudError } from '../../../hub/cloud/cloud-client.ts'

/** Issue 7, point 7: the hub reads the cloud's replies through their protocol schemas, not bare casts. */
describe('the hub reading the cloud’s replies', () => {
  let server: Server
  let base: string
  const replies: Record<string, [number, string]> = {}
  beforeAll(async () => {
    server = createServer((req, res) => {
      const [status, body] = replies[req.url ?? ''] ?? [404, '{}']
      res.writeHead(status, { 'content-type': 'application/json' }).end(body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('takes a connection reply that conforms', async () => {
    replies['/agent-api/v1/connection'] = [200, '{"mqtt_url":"mqtt://127.0.0.1:1883","keepalive_seconds":30}']
    await expect(new CloudClient(base, 'hub_x').connection()).resolves.toEqual({
      mqtt_url: 'mqtt://127.0.0.1:1883',
      keepalive_seconds: 30,
    })
  })

  it.each([
    ['a field of the wrong kind', '{"mqtt_url":5,"keepalive_seconds":30}'],
    ['a field missing', '{"mqtt_url":"mqtt://127.0.0.1:1883"}'],
    ['not JSON', '<html>proxy error</html>'],
  ])('refuses a connection reply with %s as unexpected_reply', async (_what, body) => {
    replies['/agent-api/v1/connection'] = [200, body]
    const error = await new CloudClient(base, 'hub_x').connection().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CloudError)
    expect(error).toMatchObject({ code: 'unexpected_reply', status: 200 })
  })

  it('refuses an enrollment reply that does not conform', async () => {
    replies['/agent-api/v1/enroll'] = [201, '{"agent_id":"not-a-uuid"}']
    const error = await new CloudClient(base).enroll('enr_x', 'pi', '1.0.0').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'unexpected_reply' })
  })

  it('reads the error body of a refusal, and falls back to the status when it is not one', async () => {
    replies['/agent-api/v1/enroll'] = [
      409,
      '{"error":"conflict","error_code":"enrollment_claimed","message":"This enrollment token was already used."}',
    ]
    await expect(new CloudClient(base).enroll('enr_x', 'pi', '1.0.0')).rejects.toMatchObject({
      code: 'enrollment_claimed',
      message: 'This enrollment token was already used.',
      status: 409,
    })
    replies['/agent-api/v1/enroll'] = [502, '<html>bad gateway</html>']
    await expect(new CloudClient(base).enroll('enr_x', 'pi', '1.0.0')).rejects.toMatchObject({
      code: 'http_error',
      message: 'HTTP 502',
    })
  })
})

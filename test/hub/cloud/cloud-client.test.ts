import { createHash } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CloudClient, CloudError } from '../../../hub/cloud/cloud-client.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

const FIFTY_MB = 50 * 1024 * 1024
const CHUNK = Buffer.alloc(1024 * 1024, 0x5a)
/** An HTTP-date (RFC 9110 §5.6.7) far enough ahead that the wait it asks for is positive. */
const RESTART_AT = new Date(Date.now() + 3_600_000).toUTCString()

describe('document download by the hub', () => {
  let server: Server
  let base: string
  let authorizations: (string | undefined)[] = []
  const digest = (() => {
    const hash = createHash('sha256')
    for (let i = 0; i < 50; i++) hash.update(CHUNK)
    return hash.digest('hex')
  })()

  beforeAll(async () => {
    server = createServer((req, res) => {
      authorizations.push(req.headers.authorization)
      if (req.url === '/big') {
        res.writeHead(200, { 'content-length': String(FIFTY_MB) })
        let sent = 0
        const pump = () => {
          while (sent < 50) {
            sent++
            if (!res.write(CHUNK)) return res.once('drain', pump)
          }
          res.end()
        }
        pump()
      } else if (req.url === '/cut') {
        res.writeHead(200, { 'content-length': '100' })
        res.write(Buffer.alloc(10), () => res.destroy())
      } else if (req.url === '/busy') {
        res
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' })
          .end('{"error_code":"rate_limited","message":"slow down"}')
      } else if (req.url === '/restarting') {
        res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after': RESTART_AT })
          .end('{"error_code":"shutting_down","message":"later"}')
      } else
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error_code":"document_not_found","message":"no"}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address() as { port: number }
    base = `http://127.0.0.1:${address.port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('streams a 50 MB document to disk with its credential and checks its SHA-256', async () => {
    const dir = tempDir('download-')
    authorizations = []
    const file = await new CloudClient(base, 'hub_secret').download(`${base}/big`, digest, FIFTY_MB, dir.path)
    expect(file).toBe(path.join(dir.path, digest))
    expect(statSync(file).size).toBe(FIFTY_MB)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(authorizations).toEqual(['Bearer hub_secret'])
    // Already there: not downloaded again.
    await new CloudClient(base, 'hub_secret').download(`${base}/big`, digest, FIFTY_MB, dir.path)
    expect(authorizations).toHaveLength(1)
    dir.remove()
  })

  it('refuses bytes whose checksum does not match, and keeps nothing', async () => {
    const dir = tempDir('download-')
    const wrong = 'b'.repeat(64)
    const error = await new CloudClient(base, 'hub_secret')
      .download(`${base}/big`, wrong, FIFTY_MB, dir.path)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CloudError)
    expect((error as CloudError).code).toBe('checksum_mismatch')
    expect(readdirSync(dir.path)).toEqual([])
    dir.remove()
  })

  it('reports a refused or broken download as document_download_failed', async () => {
    const dir = tempDir('download-')
    const client = new CloudClient(base, 'hub_secret')
    const missing = (await client
      .download(`${base}/none`, 'c'.repeat(64), 1, dir.path)
      .catch((e) => e)) as CloudError
    expect({ code: missing.code, status: missing.status }).toEqual({
      code: 'document_download_failed',
      status: 404,
    })
    const cut = (await client
      .download(`${base}/cut`, 'c'.repeat(64), 100, dir.path)
      .catch((e) => e)) as CloudError
    expect(cut.code).toBe('document_download_failed')
    expect(existsSync(path.join(dir.path, 'c'.repeat(64)))).toBe(false)
    expect(readdirSync(dir.path)).toEqual([])
    dir.remove()
  })

  it('a 429 or 503 is not a refusal: it carries the wait the cloud asked for in Retry-After', async () => {
    const dir = tempDir('download-')
    const client = new CloudClient(base, 'hub_secret')
    const busy = (await client
      .download(`${base}/busy`, 'd'.repeat(64), 1, dir.path)
      .catch((e) => e)) as CloudError
    expect(busy).toBeInstanceOf(CloudError)
    expect({ status: busy.status, refused: busy.refused, retryAfterMs: busy.retryAfterMs }).toEqual({
      status: 429,
      refused: false,
      retryAfterMs: 2000,
    })
    const restarting = (await client
      .download(`${base}/restarting`, 'd'.repeat(64), 1, dir.path)
      .catch((e) => e)) as CloudError
    expect(restarting.status).toBe(503)
    expect(restarting.refused).toBe(false)
    // An HTTP-date: the time until then (whole seconds, so at most an hour and more than 59 minutes).
    expect(restarting.retryAfterMs).toBeGreaterThan(3_540_000)
    expect(restarting.retryAfterMs).toBeLessThanOrEqual(3_600_000)
    const missing = (await client
      .download(`${base}/none`, 'd'.repeat(64), 1, dir.path)
      .catch((e) => e)) as CloudError
    expect({ refused: missing.refused, retryAfterMs: missing.retryAfterMs }).toEqual({
      refused: true,
      retryAfterMs: null,
    })
    expect(readdirSync(dir.path)).toEqual([])
    dir.remove()
  })
})

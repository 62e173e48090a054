import Fastify from 'fastify'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { healthRoutes } from '../../cloud/routes/health.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { startFullCloud } from './hub-link.ts'

type FullCloud = Awaited<ReturnType<typeof startFullCloud>>

/** A whole cloud on loopback whose log lines (JSON) are kept. */
async function cloudWithLog(env: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  return { full: await startFullCloud(env, logger), lines }
}

async function get(full: FullCloud, path: string) {
  const res = await fetch(`${full.url}${path}`)
  const body = (await res.json()) as { paths: Record<string, unknown> } & Record<string, unknown>
  return { status: res.status, body, requestId: res.headers.get('x-request-id') }
}

describe('health endpoints', () => {
  let full: FullCloud | undefined
  afterEach(async () => {
    await full?.close()
    full = undefined
  })

  it('answer 200 {"status":"ok"} without credentials while the database and the broker are up', async () => {
    ;({ full } = await cloudWithLog())
    const health = await get(full, '/healthz')
    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } })
    expect(health.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(await get(full, '/readyz')).toMatchObject({ status: 200, body: { status: 'ok' } })
  })

  it('are not part of the API description', async () => {
    ;({ full } = await cloudWithLog())
    const { body } = await get(full, '/openapi.json')
    expect(Object.keys(body.paths)).toContain('/api/v1/printers')
    expect(Object.keys(body.paths)).not.toContain('/healthz')
    expect(Object.keys(body.paths)).not.toContain('/readyz')
  })

  it('are exempt from the per-address quota and write no request lines', async () => {
    let lines: Record<string, unknown>[]
    ;({ full, lines } = await cloudWithLog({ RATE_LIMIT_PER_IP: '2' }))
    expect((await get(full, '/openapi.json')).status).toBe(200)
    expect((await get(full, '/openapi.json')).status).toBe(200)
    expect((await get(full, '/openapi.json')).status).toBe(429)
    for (let i = 0; i < 3; i++) {
      expect((await get(full, '/healthz')).status).toBe(200)
      expect((await get(full, '/readyz')).status).toBe(200)
    }
    const urls = lines.map((line) => (line.req as { url?: string } | undefined)?.url).filter(Boolean)
    expect(urls).toContain('/openapi.json')
    expect(urls.filter((url) => url === '/healthz' || url === '/readyz')).toEqual([])
  })

  it('readyz answers 503 not_ready naming the broker once it stopped, logged once; healthz stays 200', async () => {
    let lines: Record<string, unknown>[]
    ;({ full, lines } = await cloudWithLog())
    await full.cloud.broker.close()
    for (let i = 0; i < 3; i++) {
      expect(await get(full, '/readyz')).toMatchObject({
        status: 503,
        body: {
          error: 'service_unavailable',
          error_code: 'not_ready',
          message: 'Not ready: broker.',
          details: { not_ready: ['broker'] },
        },
      })
    }
    expect(await get(full, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } })
    expect(lines.filter((line) => line.msg === 'not ready')).toEqual([
      expect.objectContaining({ level: 40, not_ready: ['broker'] }),
    ])
  })

  it('readyz answers 200 listing degraded: ["redis"] while the quota store is stopped, ok again once back', async () => {
    const redis = await startRedisServer()
    try {
      ;({ full } = await cloudWithLog({ REDIS_URL: redis.url }))
      expect(await get(full, '/readyz')).toMatchObject({ status: 200, body: { status: 'ok' } })
      await redis.stop()
      await expect
        .poll(async () => {
          const { status, body } = await get(full!, '/readyz')
          return { status, body }
        })
        .toEqual({ status: 200, body: { status: 'degraded', degraded: ['redis'] } })
      const again = await startRedisServer({ port: redis.port })
      try {
        // A request lets the quota store try Redis again (plugins/rate-limit.ts).
        await expect
          .poll(async () => {
            await (await fetch(`${full!.url}/openapi.json`)).arrayBuffer()
            const { status, body } = await get(full!, '/readyz')
            return { status, body }
          })
          .toEqual({ status: 200, body: { status: 'ok' } })
      } finally {
        await again.stop()
      }
    } finally {
      await redis.stop()
    }
  })

  it('readyz answers 503 not_ready naming the database once it is closed', async () => {
    ;({ full } = await cloudWithLog())
    full.cloud.storage.close()
    expect(await get(full, '/readyz')).toMatchObject({
      status: 503,
      body: {
        error: 'service_unavailable',
        error_code: 'not_ready',
        message: 'Not ready: database.',
        details: { not_ready: ['database'] },
      },
    })
    expect(await get(full, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } })
  })
})

describe('readiness changes', () => {
  it('are logged once when a check fails and once when it passes again, however often probed', async () => {
    const lines: Record<string, unknown>[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    let databaseUp = true
    const app = Fastify({ loggerInstance: logger })
    await app.register(healthRoutes, { checks: { database: () => databaseUp, broker: () => true } })
    const probe = async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode
    try {
      expect([await probe(), await probe()]).toEqual([200, 200])
      databaseUp = false
      expect([await probe(), await probe(), await probe()]).toEqual([503, 503, 503])
      databaseUp = true
      expect([await probe(), await probe()]).toEqual([200, 200])
      expect(lines.map(({ level, msg, not_ready }) => ({ level, msg, not_ready }))).toEqual([
        { level: 40, msg: 'not ready', not_ready: ['database'] },
        { level: 30, msg: 'ready again', not_ready: undefined },
      ])
    } finally {
      await app.close()
    }
  })
})

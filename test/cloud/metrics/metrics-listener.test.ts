import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../../cloud/config.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { startFullCloud } from '../hub-link.ts'

describe('the metrics listener (METRICS_HOST, METRICS_PORT)', () => {
  it('is off unless METRICS_PORT is set, and binds the loopback address by default', () => {
    const dir = tempDir('metrics-config-')
    try {
      expect(loadConfig({ DATA_DIR: dir.path })).toMatchObject({ metricsHost: '127.0.0.1', metricsPort: '' })
      expect(loadConfig({ DATA_DIR: dir.path, METRICS_PORT: '9464' }).metricsPort).toBe('9464')
      for (const bad of ['65536', 'x', '-1', '09464'])
        expect(() => loadConfig({ DATA_DIR: dir.path, METRICS_PORT: bad })).toThrow(ConfigError)
      expect(() => loadConfig({ DATA_DIR: dir.path, METRICS_PORT: '65536' })).toThrow(/^METRICS_PORT: /)
    } finally {
      dir.remove()
    }
  })

  it('is not started by a cloud without METRICS_PORT', async () => {
    const full = await startFullCloud()
    try {
      expect(full.cloud.metricsUrl).toBeUndefined()
      expect((await fetch(`${full.url}/metrics`)).status).toBe(404)
    } finally {
      await full.close()
    }
  })

  it('closes with the cloud, a scraper’s kept-alive connection included', async () => {
    const full = await startFullCloud({ METRICS_PORT: '0' })
    const url = full.cloud.metricsUrl ?? ''
    expect((await fetch(url)).status).toBe(200)
    await full.close()
    await expect(fetch(url)).rejects.toThrow()
  })

  it('stops start-up, naming METRICS_PORT, when its port is taken', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve))
    const address = taken.address()
    const port = typeof address === 'object' && address ? address.port : 0
    try {
      await expect(startFullCloud({ METRICS_PORT: String(port) })).rejects.toThrow(
        `METRICS_PORT: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`,
      )
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})

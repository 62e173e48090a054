import { request } from 'node:http'
import { describe, expect, it } from 'vitest'
import { exitOf, spawnCli, waitForLogLine } from '../../helpers/cli.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

/** `cloud serve` with METRICS_PORT, as a process: only a process shows how it ends on SIGTERM. */
describe('cloud serve with the metrics listener', () => {
  it('logs where /metrics is served, and exits 0 on SIGTERM while a scraper holds its connection open', async () => {
    const dir = tempDir('metrics-serve-')
    const server = spawnCli('cloud/cli.ts', ['serve'], {
      DATA_DIR: dir.path,
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_PORT: '0',
      METRICS_PORT: '0',
    })
    try {
      const ready = await waitForLogLine(server, (line) => line.msg === 'cloud ready')
      const metricsUrl = String(ready.metrics)
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      // A scrape over a kept-alive connection, as Prometheus makes them; the connection stays open.
      const scraped = await new Promise<string>((resolve, reject) => {
        const req = request(metricsUrl, { headers: { connection: 'keep-alive' } }, (res) => {
          let text = ''
          res.on('data', (chunk: Buffer) => (text += chunk))
          res.on('end', () => resolve(text))
        })
        req.on('error', reject)
        req.end()
      })
      expect(scraped).toContain('\nprint_hub_print_jobs_created_total 0\n')
      server.kill('SIGTERM')
      expect(await exitOf(server)).toBe(0)
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL')
      dir.remove()
    }
  })
})

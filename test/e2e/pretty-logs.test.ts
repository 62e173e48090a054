import { spawn } from 'node:child_process'
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { exitOf, hasExited, ROOT } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'

describe('cloud logs on a terminal', () => {
  const dir = tempDir('e2e-pretty-')
  afterAll(() => dir.remove())

  it('are pretty, coloured lines when `cloud serve` runs on a pty, and JSON-free', async () => {
    // script(1) gives the cloud a pseudo-terminal as stdout, as an operator's shell would.
    const command = `${process.execPath} --import tsx ${path.join(ROOT, 'cloud/cli.ts')} serve`
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dir.path,
        HOST: '127.0.0.1',
        PORT: '0',
        MQTT_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    try {
      await expect
        .poll(() => stripVTControlCharacters(output), { timeout: 20_000 })
        .toMatch(/ INFO: cloud ready \{/)
      const ready = output.split('\n').find((line) => line.includes('cloud ready'))!
      expect(ready).not.toBe(stripVTControlCharacters(ready))
      expect(stripVTControlCharacters(ready)).toMatch(
        /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO: cloud ready \{"api":\["http:\/\/127\.0\.0\.1:\d+"\]/,
      )
      expect(output).not.toContain('{"level":')
    } finally {
      // script(1) ends the cloud it started when it is terminated.
      if (!hasExited(child)) child.kill('SIGTERM')
      await exitOf(child)
    }
  })
})

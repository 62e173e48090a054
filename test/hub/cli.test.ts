import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { exitOf, runCli, spawnCli } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'

describe('hub CLI: a wrong --cloud is a usage error that says what to pass', () => {
  const dirs: { remove(): void }[] = []
  const dataDir = () => {
    const dir = tempDir('hub-cli-')
    dirs.push(dir)
    return dir.path
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })

  it.each([
    [
      '127.0.0.1:8080',
      `hub: --cloud "127.0.0.1:8080" has no scheme; pass the cloud's PUBLIC_URL, e.g. http://127.0.0.1:8080`,
    ],
    [
      'mqtt://127.0.0.1:1883',
      `hub: --cloud "mqtt://127.0.0.1:1883" must be an http:// or https:// URL (the cloud's PUBLIC_URL, not its broker), e.g. http://127.0.0.1:1883`,
    ],
    [
      'http://127.0.0.1:8080/agent-api/v1?x=1',
      `hub: --cloud "http://127.0.0.1:8080/agent-api/v1?x=1" must be the cloud's base URL, without a path, query or credentials; pass http://127.0.0.1:8080`,
    ],
  ])('--cloud %s: exit 2', (cloud, message) => {
    const result = runCli('hub/cli.ts', ['run', '--cloud', cloud, '--data', dataDir(), '--enroll', 'enr_x'], {
      LOG_LEVEL: 'silent',
    })
    expect(result.status).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.split('\n')[0]).toBe(message)
  })

  it('https:// to a port that answers plain HTTP: exit 2, pass http://', async () => {
    const server = createServer((_req, res) => res.end('plain'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const hub = spawnCli(
        'hub/cli.ts',
        ['run', '--cloud', `https://127.0.0.1:${port}`, '--data', dataDir(), '--enroll', 'enr_x'],
        { LOG_LEVEL: 'silent' },
      )
      let stderr = ''
      hub.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8')
      })
      expect(await exitOf(hub)).toBe(2)
      expect(stderr.split('\n')[0]).toBe(
        `hub: --cloud https://127.0.0.1:${port} speaks TLS to a port that answers plain HTTP; pass http://127.0.0.1:${port}, or serve the cloud over TLS`,
      )
    } finally {
      server.close()
    }
  })
})

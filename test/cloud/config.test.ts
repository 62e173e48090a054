import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../cloud/config.ts'
import { tempDir } from '../helpers/temp-dir.ts'

describe('cloud configuration', () => {
  const dirs: { remove(): void }[] = []
  const dataDir = () => {
    const dir = tempDir()
    dirs.push(dir)
    return dir.path
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })

  it('uses the embedded defaults of DESIGN.md', () => {
    const dir = dataDir()
    const config = loadConfig({ DATA_DIR: dir })
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      mqttPort: 1883,
      dataDir: dir,
      publicUrl: 'http://localhost:8080',
      accessTokenTtlSeconds: 3600,
      idempotencyTtlHours: 24,
    })
  })

  it('derives PUBLIC_URL from PORT and takes environment overrides', () => {
    const config = loadConfig({ DATA_DIR: dataDir(), PORT: '9090', MQTT_PORT: '18830' })
    expect(config.port).toBe(9090)
    expect(config.mqttPort).toBe(18830)
    expect(config.publicUrl).toBe('http://localhost:9090')
  })

  it.each([
    ['PORT', 'eighty', 'PORT: must be a port number from 0 to 65535 (got "eighty")'],
    ['PORT', '70000', 'PORT: must be a port number from 0 to 65535 (got "70000")'],
    ['MQTT_PORT', '-1', 'MQTT_PORT: must be a port number from 0 to 65535 (got "-1")'],
    ['PUBLIC_URL', 'ftp://x', 'PUBLIC_URL: must be an absolute http or https URL (got "ftp://x")'],
    ['IDEMPOTENCY_TTL_HOURS', '1', 'IDEMPOTENCY_TTL_HOURS: must be from 24 to 720 (got "1")'],
    [
      'LOG_LEVEL',
      'loud',
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ],
  ])('refuses %s=%s with a message naming the setting', (name, value, message) => {
    const attempt = () => loadConfig({ DATA_DIR: dataDir(), [name]: value })
    expect(attempt).toThrow(ConfigError)
    expect(attempt).toThrow(message)
  })

  it('refuses a data directory it cannot write', () => {
    const file = path.join(dataDir(), 'not-a-dir')
    writeFileSync(file, '')
    const attempt = () => loadConfig({ DATA_DIR: path.join(file, 'data') })
    expect(attempt).toThrow(/^DATA_DIR: .*not-a-dir\/data is not a writable directory \(ENOTDIR\)$/)
  })
})

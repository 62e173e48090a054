import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { CloudConfigSchema, ConfigError, loadConfig, SETTINGS } from '../../cloud/config.ts'
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

  it('uses the embedded defaults', () => {
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

  it('is one schema: every setting names its own environment variable and says what it is', () => {
    const envs = Object.values(SETTINGS).map((s) => s.env)
    expect(new Set(envs).size).toBe(envs.length)
    expect(Object.keys(SETTINGS).sort()).toEqual(Object.keys(CloudConfigSchema.properties).sort())
    for (const setting of Object.values(SETTINGS)) {
      expect(setting.env).toMatch(/^[A-Z][A-Z0-9_]+$/)
      expect(setting.description.length).toBeGreaterThan(5)
    }
    const config = loadConfig({
      DATA_DIR: dataDir(),
      TRUST_PROXY: '2',
      MQTT_PUBLIC_URL: 'mqtts://mq.example:8883/',
    })
    expect(Value.Check(CloudConfigSchema, config)).toBe(true)
    expect(config).toMatchObject({ trustProxy: 2, mqttPublicUrl: 'mqtts://mq.example:8883' })
  })

  it('refuses a data directory it cannot write', () => {
    const file = path.join(dataDir(), 'not-a-dir')
    writeFileSync(file, '')
    const attempt = () => loadConfig({ DATA_DIR: path.join(file, 'data') })
    expect(attempt).toThrow(/^DATA_DIR: .*not-a-dir\/data is not a writable directory \(ENOTDIR\)$/)
  })
})

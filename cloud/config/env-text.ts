import { existsSync } from 'node:fs'
import type { SettingOptions } from './setting-builders.ts'

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`)
    this.name = 'ConfigError'
  }
}

/** Environment text → a value of the setting's schema; throws what the value must be when it cannot be. */
export function fromText(key: string, schema: SettingOptions, raw: string): unknown {
  const must = (why: string): never => {
    throw new ConfigError(schema.env, `${why} (got ${JSON.stringify(raw)})`)
  }
  if (schema.port) {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) must('must be a port number from 0 to 65535')
    return Number(raw)
  }
  if (schema.type === 'integer') {
    if (!/^\d+$/.test(raw)) must('must be a whole number')
    const n = Number(raw)
    if (n < Number(schema.minimum) || n > Number(schema.maximum))
      must(`must be from ${schema.minimum} to ${schema.maximum}`)
    return n
  }
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.includes(raw)) must(`must be one of ${schema.enum.join(', ')}`)
    return raw
  }
  if (Array.isArray(schema.schemes)) {
    if (raw === '' && String(schema.pattern).startsWith('^$')) return ''
    const what = `must be an absolute ${schema.schemes.join(' or ')} URL`
    let parsed: URL
    try {
      parsed = new URL(raw)
    } catch {
      return must(what)
    }
    if (!schema.schemes.includes(parsed.protocol.replace(/:$/, ''))) must(what)
    return raw.replace(/\/+$/, '')
  }
  if (schema.file) {
    if (raw !== '' && !existsSync(raw)) must('names no file')
    return raw
  }
  if (key === 'trustProxy') {
    // Behind a reverse proxy the per-address quotas must see the client, not the proxy.
    if (raw === '' || raw === 'false') return false
    if (raw === 'true') return true
    if (/^\d+$/.test(raw)) return Number(raw)
    if (!/^[0-9A-Fa-f.:/,\s]+$/.test(raw)) must('must be true, false, a hop count, or proxy addresses')
    return raw
  }
  if (raw.trim() === '') must('must not be empty')
  return raw
}

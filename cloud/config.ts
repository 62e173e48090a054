import { type Static, type TSchema, Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { ACCESS_SETTINGS } from './config/access-settings.ts'
import { BROKER_SETTINGS } from './config/broker-settings.ts'
import { prepareDataDir } from './config/data-dir.ts'
import { DOCUMENT_SETTINGS } from './config/document-settings.ts'
import { ConfigError, fromText } from './config/env-text.ts'
import { JOB_SETTINGS } from './config/job-settings.ts'
import { METRICS_SETTINGS } from './config/metrics-settings.ts'
import { SERVER_SETTINGS } from './config/server-settings.ts'
import { settingOf } from './config/setting-builders.ts'
import { STORAGE_SETTINGS } from './config/storage-settings.ts'
import { WEBHOOK_SETTINGS } from './config/webhook-settings.ts'

export { ConfigError }

/**
 * Cloud configuration: one TypeBox schema, its settings grouped by concern in cloud/config/. Each setting's
 * schema says what a valid value is and carries where it comes from (`env`, its environment variable) and its
 * `default`; `loadConfig` reads them once at start-up, checks them against the schema and names the first bad
 * setting in a one-line message.
 */
export const CloudConfigSchema = Type.Object({
  ...SERVER_SETTINGS,
  ...STORAGE_SETTINGS,
  ...BROKER_SETTINGS,
  ...DOCUMENT_SETTINGS,
  ...JOB_SETTINGS,
  ...ACCESS_SETTINGS,
  ...METRICS_SETTINGS,
  ...WEBHOOK_SETTINGS,
})
export type CloudConfig = Static<typeof CloudConfigSchema>
type Key = keyof CloudConfig

/** Where each setting comes from and what it is, for `--help` and the README. */
export const SETTINGS = Object.fromEntries(
  Object.entries(CloudConfigSchema.properties).map(([key, schema]) => {
    const { env, description = '' } = settingOf(schema)
    return [key, { env, default: settingOf(schema).default, description }]
  }),
) as Record<Key, { env: string; default: unknown; description: string }>

/** Defaults that follow from other settings (read before them: PORT comes before PUBLIC_URL). */
const DERIVED_DEFAULTS: Partial<Record<Key, (config: Partial<CloudConfig>) => unknown>> = {
  publicUrl: (config) => `http://localhost:${config.port}`,
}

const checkConfig = Compile(CloudConfigSchema)

/** Reads every setting from `env` (defaults where unset), validates them, and prepares the data directory. */
export function loadConfig(env: Record<string, string | undefined> = process.env): CloudConfig {
  const config: Partial<Record<Key, unknown>> = {}
  for (const [key, schema] of Object.entries(CloudConfigSchema.properties) as [Key, TSchema][]) {
    const options = settingOf(schema)
    const raw = env[options.env]
    config[key] =
      raw !== undefined
        ? fromText(key, options, raw)
        : (DERIVED_DEFAULTS[key]?.(config as Partial<CloudConfig>) ?? options.default)
  }
  config.dataDir = prepareDataDir(String(config.dataDir))
  if (!checkConfig.Check(config)) {
    const first = checkConfig.Errors(config)[0]
    const key = (first?.instancePath ?? '').slice(1) as Key
    throw new ConfigError(SETTINGS[key]?.env ?? 'configuration', first?.message ?? 'invalid')
  }
  return config
}

import { type TSchema, Type } from 'typebox'

export const MiB = 1024 * 1024

export const int = (env: string, minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum, env, default: fallback, description })
export const port = (env: string, fallback: number, description: string) =>
  Type.Integer({ minimum: 0, maximum: 65535, env, default: fallback, description, port: true })
/** An absolute URL of one of `schemes`, without a trailing slash; `optional`: empty is allowed too. */
export const url = (env: string, schemes: string[], description: string, optional = false) =>
  Type.String({
    pattern: `^${optional ? '$|^' : ''}(${schemes.join('|')})://`,
    env,
    description,
    schemes,
    ...(optional && { default: '' }),
  })
export const optionalFile = (env: string, description: string) =>
  Type.String({ env, default: '', description, file: true })

/**
 * What a setting's schema carries besides JSON Schema's own keywords: where the setting comes from (`env`, its
 * environment variable), its `default` and `description`, and how its text is read (env-text.ts).
 */
export interface SettingOptions {
  env: string
  default?: unknown
  description?: string
  type?: string
  minimum?: number
  maximum?: number
  enum?: readonly string[]
  pattern?: string
  port?: boolean
  schemes?: string[]
  file?: boolean
}
export const settingOf = (schema: TSchema) => schema as unknown as SettingOptions

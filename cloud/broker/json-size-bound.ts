import type { TSchema } from 'typebox'

/**
 * Bytes one code point can take in `JSON.stringify` output as UTF-8: a control character or a lone surrogate
 * is escaped as `\u001f` (6); anything else is at most 4. maxLength counts code points (JSON Schema §6.3.1).
 */
const MAX_BYTES_PER_CHARACTER = 6
/** The longest `JSON.stringify` of a finite number, e.g. `-0.0000012345678901234567` or `-1.7976931348623157e+308`. */
const MAX_NUMBER_BYTES = 25

interface JsonSchema {
  type?: string
  const?: unknown
  enum?: unknown[]
  anyOf?: JsonSchema[]
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  maxLength?: number
  maxItems?: number
  minimum?: number
  maximum?: number
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

/**
 * The most bytes `JSON.stringify` can produce for a value valid against `schema` with only the properties it
 * declares. Throws, naming the path, for a string without maxLength or an array without maxItems: such a
 * schema has no bound. `path` is for that message.
 */
export function maxJsonBytes(schema: TSchema, path = '$'): number {
  const s = schema as JsonSchema
  if (s.const !== undefined) return jsonBytes(s.const)
  if (s.enum) return Math.max(...s.enum.map(jsonBytes))
  if (s.anyOf) return Math.max(...s.anyOf.map((member) => maxJsonBytes(member as TSchema, path)))
  switch (s.type) {
    case 'null':
      return 4
    case 'boolean':
      return 5
    case 'integer':
      return s.minimum !== undefined && s.maximum !== undefined
        ? Math.max(jsonBytes(s.minimum), jsonBytes(s.maximum))
        : MAX_NUMBER_BYTES
    case 'number':
      return MAX_NUMBER_BYTES
    case 'string':
      if (s.maxLength === undefined) throw new Error(`${path}: a string without maxLength has no size bound`)
      return 2 + MAX_BYTES_PER_CHARACTER * s.maxLength
    case 'array': {
      if (s.maxItems === undefined) throw new Error(`${path}: an array without maxItems has no size bound`)
      const item = maxJsonBytes(s.items as TSchema, `${path}[]`)
      return 2 + s.maxItems * item + Math.max(0, s.maxItems - 1)
    }
    case 'object': {
      const entries = Object.entries(s.properties ?? {})
      const members = entries.map(
        ([key, value]) => jsonBytes(key) + 1 + maxJsonBytes(value as TSchema, `${path}.${key}`),
      )
      return 2 + members.reduce((sum, bytes) => sum + bytes, 0) + Math.max(0, entries.length - 1)
    }
    default:
      throw new Error(`${path}: no size bound for this schema`)
  }
}

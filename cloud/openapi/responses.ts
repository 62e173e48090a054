import { type TSchema, Type } from 'typebox'

/**
 * Response entries for route schemas in Fastify's content form: Fastify serializes with the schema of the
 * reply's media type, and the OpenAPI document shows the description, the media type and `headers`, which
 * the route sends with every such answer.
 */
export const jsonResponse = <T extends TSchema>(
  description: string,
  schema: T,
  headers: Record<string, TSchema> = {},
) => ({
  description,
  headers,
  content: { 'application/json': { schema } },
})

/** Bytes streamed as they are (Fastify does not serialize a stream). */
export const binaryResponse = (description: string, headers: Record<string, TSchema> = {}) => ({
  description,
  headers,
  content: {
    'application/octet-stream': { schema: Type.Unsafe<unknown>({ type: 'string', format: 'binary' }) },
  },
})

import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

/**
 * Request validation. Bodies are checked as sent: no type coercion ("2" is not a number), unknown fields
 * refused, and every error reported (so a 422 names every offending field). Query strings, path parameters
 * and headers arrive as text, so those are coerced.
 */
function ajv(coerceTypes: boolean) {
  const instance = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  })
  addFormats.default(instance)
  // document_url (uri) and document_base64 (byte) carry these formats for clients; the URL policy and the
  // Base64 decoder judge those values and answer with their own 400s (invalid_url_request, invalid_base64).
  instance.addFormat('uri', true).addFormat('byte', true)
  return instance
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodies = ajv(false)
  const texts = ajv(true)
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodies : texts).compile(schema as object)
}

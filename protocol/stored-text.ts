import { Type } from 'typebox'

/**
 * Text the service stores: no NUL, which PostgreSQL's text cannot hold and no name, file name or customer id
 * needs. A NUL in such a field is a 422 naming it.
 */
export const StoredText = (options: { minLength: number; maxLength: number; description?: string }) =>
  Type.String({ ...options, pattern: '^[^\\u0000]*$' })

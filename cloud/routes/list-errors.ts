import { ApiError } from '../../print-api/api-error.ts'

/** A cursor must be the id of an item the caller listed before; anything else is a 422 (spec: pagination). */
export function unknownCursor(): never {
  throw new ApiError('validation_failed', 'Invalid cursor.', {
    fields: [{ field: 'cursor', message: 'does not name an item of this list', location: 'querystring' }],
  })
}

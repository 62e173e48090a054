import { ApiError } from './api-error.ts'

export type Reference = 'printer_id' | 'document_id'
const REFERENCED: Record<Reference, string> = { printer_id: 'printer', document_id: 'document' }

/** The 422 of ids that name nothing of this account, each named in details.fields. */
export function unknownReferences(...fields: Reference[]): ApiError {
  return new ApiError('validation_failed', `Invalid ${fields.join(', ')}.`, {
    fields: fields.map((field) => ({
      field,
      message: `does not name a ${REFERENCED[field]} of this account`,
      location: 'body',
    })),
  })
}

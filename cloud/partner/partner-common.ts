import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'

/** Spec (Partner management): answers that carry secrets are never stored by any cache. */
export const PRIVATE_NO_STORE = 'private, no-store'
export const PrivateNoStore = Type.Enum([PRIVATE_NO_STORE], {
  description: 'The answer holds single-use secrets: no cache may keep it.',
})

/** One application never learns of another's accounts: unknown and foreign are the same 404. */
export function managedAccountNotFound(): never {
  throw new ApiError('managed_account_not_found', 'This application has no managed account with that id.')
}

import { ERROR_CODES, type ErrorCode } from '../protocol/errors.ts'

/**
 * The one typed error of the print API (the cloud, and a hub's LAN API). Code throws it; the error handler
 * turns it into the spec's error body with the catalogue's status. `headers` carries what the answer needs beside the body (Retry-After, ...).
 */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly details: Record<string, unknown> | undefined
  readonly headers: Record<string, string>

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.code = code
    this.status = ERROR_CODES[code].status
    this.details = details
    this.headers = headers
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError
}

import { ApiError } from '../../print-api/api-error.ts'

// The fetcher's errors, each with a stable `details.reason`.

/** Maps a socket or request error: TLS failures, HTTP parse errors (llhttp `HPE_*`), the rest. */
export function socketFailed(error: unknown): ApiError {
  const code = errorCode(error).cause ?? ''
  if (/^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SSL|TLS/.test(code)) return tlsFailed(error)
  if (code.startsWith('HPE_')) return fetchFailed('invalid_response', 'The document server answered badly.')
  return fetchFailed('connection_failed', 'The connection to the document server failed.', errorCode(error))
}

export function tlsFailed(error: unknown): ApiError {
  const tls = errorCode(error).cause ?? (error instanceof Error ? error.message : String(error))
  return fetchFailed('tls_error', 'The document server TLS certificate could not be verified.', {
    tls_error: tls,
  })
}

/** The error's `code` (ECONNREFUSED, ...) as `{ cause }` details, or nothing. */
export function errorCode(error: unknown): { cause?: string } {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' ? { cause: code } : {}
}

export function fetchFailed(
  reason: string,
  message: string,
  details: Record<string, unknown> = {},
): ApiError {
  return new ApiError('document_fetch_failed', message, { reason, ...details })
}

export function notAllowed(reason: string, message: string): ApiError {
  return new ApiError('url_not_allowed', message, { reason })
}

export function tooLarge(reason: string, limit: number): ApiError {
  return new ApiError('document_too_large', 'The document is larger than the limit.', {
    reason,
    limit_bytes: limit,
  })
}

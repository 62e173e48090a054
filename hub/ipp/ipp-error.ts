/**
 * What went wrong talking to an IPP printer:
 * - `unreachable`: no connection (refused, no route, unknown host) or it dropped before an answer came;
 * - `timeout`: no answer within the time given;
 * - `tls`: an `ipps://` printer whose certificate was refused, or a failed handshake;
 * - `http`: an HTTP answer other than 200 (`httpStatus`), e.g. 401 for a printer that wants a password;
 * - `ipp_status`: an IPP status code other than successful-ok* (`ippStatus`, its name or hex code);
 * - `malformed`: an answer that is not an IPP message;
 * - `aborted`: the caller's AbortSignal fired.
 */
export type IppErrorKind = 'unreachable' | 'timeout' | 'tls' | 'http' | 'ipp_status' | 'malformed' | 'aborted'

export class IppError extends Error {
  readonly httpStatus: number | null
  readonly ippStatus: string | null
  /** The printer's job, when the error came after Print-Job created one. */
  readonly jobId: number | null

  constructor(
    readonly kind: IppErrorKind,
    message: string,
    details: { httpStatus?: number; ippStatus?: string; jobId?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause })
    this.name = 'IppError'
    this.httpStatus = details.httpStatus ?? null
    this.ippStatus = details.ippStatus ?? null
    this.jobId = details.jobId ?? null
  }
}

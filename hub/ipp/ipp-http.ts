import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { IppError } from './ipp-error.ts'
import type { IppEndpoint } from './ipp-uri.ts'

export interface IppHttpOptions {
  /** The whole exchange, connection to last byte of the answer. */
  timeoutMs: number
  signal?: AbortSignal
  /** For `ipps://`: e.g. `{ ca }` for a printer's own certificate. Node's default verification otherwise. */
  tls?: Pick<ConnectionOptions, 'ca' | 'rejectUnauthorized' | 'checkServerIdentity'>
}

/**
 * How long an answer is still waited for when the caller aborts after all of a document has gone: the
 * printer has a whole job by then and prints it whatever the client does, so the caller needs its job-id
 * to cancel it. Never past the exchange's own timeout.
 */
const ANSWER_AFTER_ABORT_MS = 5_000

/** The most of an answer read; a printer's full attribute set is tens of kilobytes. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024

/** Errors that mean the printer could not be reached or dropped the connection before answering. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
])

/**
 * POSTs one IPP request (RFC 8010 §4: HTTP POST, Content-Type application/ipp); the answer's body.
 * `documentPath`, when given, follows the encoded request as the document data (RFC 8010 §3.1.1), streamed
 * from disk. Every failure is an IppError.
 *
 * The exchange ends within `timeoutMs` whatever the printer does: connecting, the TLS handshake, sending
 * the document and reading the answer all count, and the timer (like the caller's signal) settles the
 * promise itself rather than relying on an event from the request it destroys. The caller's signal ends
 * the exchange at once, except once all of a document has gone: then the answer is waited for a little
 * longer (ANSWER_AFTER_ABORT_MS), and it is what the promise settles with.
 */
export async function postIpp(
  endpoint: IppEndpoint,
  request: Buffer,
  options: IppHttpOptions & { documentPath?: string },
): Promise<Buffer> {
  const aborted = (cause: unknown) => new IppError('aborted', 'the request was aborted', { cause })
  if (options.signal?.aborted) throw aborted(options.signal.reason)
  const documentBytes = options.documentPath === undefined ? 0 : (await stat(options.documentPath)).size
  if (options.signal?.aborted) throw aborted(options.signal.reason)
  const requestOptions: https.RequestOptions = {
    host: endpoint.host,
    port: endpoint.port,
    path: endpoint.path,
    method: 'POST',
    headers: { 'Content-Type': 'application/ipp', 'Content-Length': request.length + documentBytes },
    agent: false,
    ...(endpoint.secure
      ? { ...options.tls, servername: isIP(endpoint.host) ? undefined : endpoint.host }
      : {}),
  }
  const deadline = Date.now() + options.timeoutMs
  return new Promise<Buffer>((resolve, reject) => {
    // A document that cannot be read is the caller's problem, not the printer's: it is rejected as it is.
    let documentError: Error | undefined
    let settled = false
    /** Bytes of the document handed to the connection. */
    let documentSent = 0
    const document = options.documentPath === undefined ? undefined : createReadStream(options.documentPath)
    const req = (endpoint.secure ? https : http).request(requestOptions)
    // Once the answer is in, or the time is up, the exchange is over: stop sending and drop the connection.
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      outcome()
      document?.destroy()
      req.destroy()
    }
    const fail = (error: unknown) => settle(() => reject(documentError ?? transportError(error)))
    let timer = setTimeout(
      () =>
        settle(() =>
          reject(documentError ?? new IppError('timeout', `no answer within ${options.timeoutMs} ms`)),
        ),
      options.timeoutMs,
    )
    const onAbort = () => {
      const reason = options.signal?.reason
      if (document === undefined || documentSent < documentBytes) {
        settle(() => reject(aborted(reason)))
        return
      }
      clearTimeout(timer)
      const wait = Math.max(0, Math.min(ANSWER_AFTER_ABORT_MS, deadline - Date.now()))
      timer = setTimeout(() => settle(() => reject(aborted(reason))), wait)
    }
    options.signal?.addEventListener('abort', onAbort, { once: true })

    let response: http.IncomingMessage | undefined
    req.on('response', (res) => {
      response = res
      if (res.statusCode !== 200) {
        const httpStatus = res.statusCode ?? 0
        settle(() => reject(new IppError('http', `the printer answered HTTP ${httpStatus}`, { httpStatus })))
        return
      }
      const chunks: Buffer[] = []
      let length = 0
      res.on('data', (chunk: Buffer) => {
        length += chunk.length
        if (length > MAX_RESPONSE_BYTES)
          settle(() =>
            reject(new IppError('malformed', `the printer's answer is over ${MAX_RESPONSE_BYTES} bytes`)),
          )
        else chunks.push(chunk)
      })
      // The answer may come before all of the document has gone (or before the file's end has been read):
      // a printer may refuse a job early, or take it. Node's client ends a connection that is not kept
      // alive as soon as the answer ends, so nothing more of the document could go anyway; a printer that
      // took the job before it had all of it says what became of the job when asked.
      res.on('end', () => settle(() => resolve(Buffer.concat(chunks))))
      res.on('error', fail)
    })
    req.on('error', fail)
    // A connection that closes without a complete answer and without an error (e.g. after the request was
    // destroyed under it) must not leave the exchange waiting; a complete answer still ends with 'end'.
    req.on('close', () => {
      if (!response?.complete) fail(new Error('the connection closed before the answer was complete'))
    })
    if (document === undefined) {
      req.end(request)
      return
    }
    req.write(request)
    document.on('data', (chunk) => {
      documentSent += chunk.length
    })
    document.on('error', (error) => {
      documentError = error
      fail(error)
    })
    document.pipe(req)
  })
}

function transportError(error: unknown): IppError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? ''
  const message = error instanceof Error ? error.message : String(error)
  if (UNREACHABLE_CODES.has(code) || code === 'ERR_STREAM_PREMATURE_CLOSE' || message === 'socket hang up')
    return new IppError('unreachable', `cannot reach the printer: ${message}`, { cause: error })
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|EPROTO/.test(code))
    return new IppError('tls', `TLS with the printer failed: ${message}`, { cause: error })
  return new IppError('unreachable', `cannot talk to the printer: ${message}`, { cause: error })
}

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
 */
export async function postIpp(
  endpoint: IppEndpoint,
  request: Buffer,
  options: IppHttpOptions & { documentPath?: string },
): Promise<Buffer> {
  const documentBytes = options.documentPath === undefined ? 0 : (await stat(options.documentPath)).size
  const timeout = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
  const failure = (error: unknown): IppError => {
    if (options.signal?.aborted) return new IppError('aborted', 'the request was aborted', { cause: error })
    if (timeout.aborted)
      return new IppError('timeout', `no answer within ${options.timeoutMs} ms`, { cause: error })
    return transportError(error)
  }
  if (signal.aborted) throw failure(signal.reason)
  const requestOptions: https.RequestOptions = {
    host: endpoint.host,
    port: endpoint.port,
    path: endpoint.path,
    method: 'POST',
    headers: { 'Content-Type': 'application/ipp', 'Content-Length': request.length + documentBytes },
    signal,
    agent: false,
    ...(endpoint.secure
      ? { ...options.tls, servername: isIP(endpoint.host) ? undefined : endpoint.host }
      : {}),
  }
  return new Promise<Buffer>((resolve, reject) => {
    // A document that cannot be read is the caller's problem, not the printer's: it is rejected as it is.
    let documentError: Error | undefined
    const document = options.documentPath === undefined ? undefined : createReadStream(options.documentPath)
    // Once the answer is in, stop sending: a printer may refuse a job before it has read all of it.
    const settle = (outcome: () => void) => {
      outcome()
      document?.destroy()
      req.destroy()
    }
    const fail = (error: unknown) => settle(() => reject(documentError ?? failure(error)))
    const req = (endpoint.secure ? https : http).request(requestOptions, (res) => {
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
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        // Accepted before the printer has all of the document (RFC 8011 Appendix B: 0x0000–0x00ff are
        // successes): the rest still goes.
        const accepted = body.length >= 4 && body.readUInt16BE(2) <= 0x00ff
        if (document !== undefined && !req.writableFinished && accepted)
          req.once('finish', () => settle(() => resolve(body)))
        else settle(() => resolve(body))
      })
      res.on('error', fail)
    })
    req.on('error', fail)
    if (document === undefined) {
      req.end(request)
      return
    }
    req.write(request)
    document.on('error', (error) => {
      documentError = error
      req.destroy(error)
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

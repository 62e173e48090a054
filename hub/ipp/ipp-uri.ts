/** Where an IPP printer answers: the HTTP(S) request to make and the `printer-uri` to name in it. */
export interface IppEndpoint {
  /** The URI as IPP names the printer (RFC 8011 §4.1.5: the target of every operation), without userinfo. */
  printerUri: string
  /** `ipps://`: IPP over HTTPS (RFC 7472). */
  secure: boolean
  /** Host name or address; IPv6 literals without brackets. */
  host: string
  port: number
  /** The HTTP request target. */
  path: string
}

/** IPP's registered port, for `ipp://` (RFC 3510 §4.2) and `ipps://` (RFC 7472) alike. */
export const IPP_PORT = 631

export class IppUriError extends Error {
  constructor(
    readonly uri: string,
    problem: string,
  ) {
    super(`IPP printer URI ${JSON.stringify(uri)}: ${problem}`)
    this.name = 'IppUriError'
  }
}

/** Reads an `ipp://` or `ipps://` printer URI; throws IppUriError for anything else. */
export function parseIppUri(uri: string): IppEndpoint {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    throw new IppUriError(uri, 'is not a URI')
  }
  if (url.protocol !== 'ipp:' && url.protocol !== 'ipps:')
    throw new IppUriError(uri, 'must start with ipp:// or ipps://')
  if (url.hostname === '') throw new IppUriError(uri, 'names no host')
  if (url.username !== '' || url.password !== '')
    throw new IppUriError(uri, 'must not carry a user name or password')
  const port = url.port === '' ? IPP_PORT : Number(url.port)
  // RFC 3510 §4.5: an IPP URL without a path is the resource "/".
  const path = `${url.pathname === '' ? '/' : url.pathname}${url.search}`
  return {
    printerUri: `${url.protocol}//${url.host}${path}`,
    secure: url.protocol === 'ipps:',
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    path,
  }
}

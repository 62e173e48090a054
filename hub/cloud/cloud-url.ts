/** A `--cloud` that cannot be the cloud's address; the message says what is wrong and what to pass. */
export class CloudUrlError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CloudUrlError'
  }
}

/**
 * Checks `--cloud`: the cloud's PUBLIC_URL, an absolute http or https URL with no path, query or fragment.
 * Returns it without a trailing slash.
 */
export function parseCloudUrl(raw: string): string {
  const given = JSON.stringify(raw)
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new CloudUrlError(
      `--cloud ${given} has no scheme; pass the cloud's PUBLIC_URL, e.g. http://${raw.replace(/^\/+/, '') || 'CLOUD:8080'}`,
    )
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new CloudUrlError(
      `--cloud ${given} is not a URL; pass the cloud's PUBLIC_URL, e.g. http://CLOUD:8080`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CloudUrlError(
      `--cloud ${given} must be an http:// or https:// URL (the cloud's PUBLIC_URL, not its broker), e.g. http://${url.host || 'CLOUD:8080'}`,
    )
  }
  if (
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new CloudUrlError(
      `--cloud ${given} must be the cloud's base URL, without a path, query or credentials; pass ${url.origin}`,
    )
  }
  return url.origin
}

/** TLS spoken to a port that answers plain HTTP (OpenSSL: "wrong version number"). */
export function isTlsToPlainHttp(error: unknown): boolean {
  const code = ((error as Error | undefined)?.cause as NodeJS.ErrnoException | undefined)?.code
  return code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG'
}

/** The usage error for an https:// `--cloud` whose port speaks plain HTTP. */
export function tlsToPlainHttpError(cloudUrl: string): CloudUrlError {
  return new CloudUrlError(
    `--cloud ${cloudUrl} speaks TLS to a port that answers plain HTTP; pass ${cloudUrl.replace(/^https:/, 'http:')}, or serve the cloud over TLS`,
  )
}

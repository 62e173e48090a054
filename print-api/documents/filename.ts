/**
 * The name a fetched document goes by: the Content-Disposition filename (RFC 6266 §4.3, `filename*` in the
 * RFC 8187 encoding preferred over `filename`), else the last segment of the final URL's path. The result is
 * a bare name (no directories, no control characters, at most 255 characters) or null.
 */
export function documentFilename(contentDisposition: string | undefined, finalUrl: URL): string | null {
  const fromHeader = contentDisposition === undefined ? null : dispositionFilename(contentDisposition)
  if (fromHeader !== null) return fromHeader
  const segment = finalUrl.pathname.split('/').pop() ?? ''
  return bareFilename(decode(segment))
}

export function dispositionFilename(header: string): string | null {
  // RFC 8187 §3.2: ext-value = charset "'" [ language ] "'" value-chars
  const extended = /(?:^|;)\s*filename\*\s*=\s*([^';]+)'[^']*'([^;\s]*)/i.exec(header)
  if (extended?.[1] !== undefined && extended[2] !== undefined && /^utf-8$/i.test(extended[1].trim())) {
    const name = bareFilename(decode(extended[2]))
    if (name !== null) return name
  }
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header)
  if (quoted?.[1] !== undefined) return bareFilename(quoted[1].replace(/\\(.)/g, '$1'))
  const token = /(?:^|;)\s*filename\s*=\s*([^";\s]+)/i.exec(header)
  return token?.[1] === undefined ? null : bareFilename(token[1])
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** A bare file name: no directories, no control characters, at most 255 characters; null when nothing is left. */
export function bareFilename(name: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const base = (name.split(/[/\\]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim()
  if (base === '' || base === '.' || base === '..') return null
  return base.slice(0, 255)
}

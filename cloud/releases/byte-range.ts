/**
 * One byte range of a `Range` header (RFC 9110 §14.1.2): `bytes=first-last`, `bytes=first-` or
 * `bytes=-suffix`, clamped to the file. Returns null when there is nothing to honour (no header, another
 * unit, several ranges, a malformed value: the whole file is sent, as §14.2 allows), and 'unsatisfiable'
 * when the one range lies wholly past the end (416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (header === undefined) return null
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match) return null
  const [, first = '', last = ''] = match
  if (first === '' && last === '') return null
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === '' ? size - 1 : Number(last)
  if (start >= size) return 'unsatisfiable'
  if (end < start) return null
  return { start, end: Math.min(end, size - 1) }
}

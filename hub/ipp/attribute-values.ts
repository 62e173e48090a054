/**
 * Typed reads of attribute values as the `ipp` package gives them: one value as itself, a 1setOf as an
 * array, rangeOfInteger as [min, max], resolution as [x, y, 'dpi' | 'dpcm'], a collection as an object,
 * textWithLanguage as language + U+001E + text. Values of an unexpected type are skipped.
 */

const LANGUAGE_SEPARATOR = '\u001e'

/** Values of a 1setOf attribute given as one value or several, where a value may itself be an array. */
function setOf(value: unknown, isOne: (value: unknown) => boolean): unknown[] {
  if (value === undefined || value === null) return []
  if (isOne(value)) return [value]
  return Array.isArray(value) ? value : []
}

export function strings(value: unknown): string[] {
  return setOf(value, (v) => typeof v === 'string').filter((v): v is string => typeof v === 'string')
}

/** The first text value, without its language; null when absent or empty. */
export function text(value: unknown): string | null {
  const first = strings(value)[0]
  if (first === undefined) return null
  const withoutLanguage = first.slice(first.indexOf(LANGUAGE_SEPARATOR) + 1).trim()
  return withoutLanguage === '' ? null : withoutLanguage
}

function isRange(value: unknown): value is [number, number] {
  return Array.isArray(value) && value.length === 2 && value.every((n) => Number.isInteger(n))
}

/** An integer or a rangeOfInteger as { min, max }; null for anything else. */
export function integerOrRange(value: unknown): { min: number; max: number } | null {
  if (Number.isInteger(value)) return { min: value as number, max: value as number }
  if (isRange(value)) return { min: Math.min(...value), max: Math.max(...value) }
  return null
}

const isResolution = (v: unknown): v is [number, number, string] =>
  Array.isArray(v) && v.length === 3 && typeof v[0] === 'number' && typeof v[1] === 'number'

/**
 * Resolutions with the same dots per inch across and down, in dpi (RFC 8010 §3.9: units 3 = dpi,
 * 4 = dots per centimetre; a dpcm value is converted).
 */
export function squareResolutionsDpi(value: unknown): number[] {
  return setOf(value, isResolution)
    .filter(isResolution)
    .filter(([x, y]) => x === y)
    .map(([x, , units]) => (units === 'dpcm' ? Math.round(x * 2.54) : x))
}

export function collections(value: unknown): Record<string, unknown>[] {
  const isCollection = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)
  return setOf(value, isCollection).filter(isCollection) as Record<string, unknown>[]
}

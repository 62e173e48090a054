/**
 * One string field of a parsed url-encoded form (@fastify/formbody) or query string. A missing field, or one
 * sent twice (which the parsers give as an array), is the empty string: pages treat it as not filled in.
 */
export function field(source: unknown, name: string): string {
  const value = typeof source === 'object' && source !== null ? (source as Record<string, unknown>)[name] : ''
  return typeof value === 'string' ? value : ''
}

/** The named string fields of a form (see `field`). */
export function formFields<const Name extends string>(
  body: unknown,
  names: readonly Name[],
): Record<Name, string> {
  return Object.fromEntries(names.map((name) => [name, field(body, name)])) as Record<Name, string>
}

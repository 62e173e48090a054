/**
 * Reading what real processes logged (the harness keeps their stdout and stderr as chunks): whole lines, the
 * JSON ones parsed, and a check of the raw text for a key that appears twice in one object, which JSON.parse
 * would hide by keeping the last.
 */
export function rawLines(chunks: string[]): string[] {
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
}

export function logLines(chunks: string[]): Record<string, unknown>[] {
  return rawLines(chunks).map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** Every key that appears more than once in one object of a JSON text (nested objects included). */
export function duplicateKeys(json: string): string[] {
  const duplicates: string[] = []
  // One entry per open object (its keys so far) or array (null).
  const open: (Set<string> | null)[] = []
  let expectingKey = false
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (c === '"') {
      let end = i + 1
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1
      const keys = open.at(-1)
      if (expectingKey && keys) {
        const key = JSON.parse(json.slice(i, end + 1)) as string
        if (keys.has(key)) duplicates.push(key)
        keys.add(key)
        expectingKey = false
      }
      i = end
    } else if (c === '{') {
      open.push(new Set())
      expectingKey = true
    } else if (c === '[') {
      open.push(null)
    } else if (c === '}' || c === ']') {
      open.pop()
      expectingKey = false
    } else if (c === ',') {
      expectingKey = open.at(-1) instanceof Set
    }
  }
  return duplicates
}

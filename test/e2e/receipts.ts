/**
 * Receipts that name their job, and counting them at a simulated printer: what the end-to-end invariant
 * tests ("never lose, never double", fault and race) compare with the status the API reports.
 */

/** How many times `needle` occurs in `haystack`, without overlaps. */
export function occurrences(haystack: Buffer, needle: Buffer): number {
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    count++
  return count
}

/**
 * An ESC/POS receipt whose first printed bytes are `<name>` and whose last text is `</name>`: a copy that
 * started shows its head, a whole copy shows the full payload, so partial copies can be told apart.
 */
export function namedReceipt(name: string): { bytes: Buffer; head: Buffer } {
  const head = Buffer.from(`<${name}>`, 'latin1')
  const bytes = Buffer.from(`\x1b@<${name}>\nthank you for your order\n</${name}>\n\x1dVB\x00`, 'latin1')
  return { bytes, head }
}

/** A small seeded generator (mulberry32): the same seed gives the same sequence, so a run can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

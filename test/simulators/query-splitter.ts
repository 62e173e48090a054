import type { LanguageStatus, StatusQuery } from './status-replies.ts'

export type Piece = { kind: 'print'; bytes: Buffer } | { kind: 'query'; query: StatusQuery }

const EMPTY = Buffer.alloc(0)

/**
 * Splits what one connection receives into print data and status queries, chunk by chunk.
 *
 * Where a query is recognised (the known ambiguity: a real ESC/POS printer answers DLE EOT even in the
 * middle of raster data, so image bytes that happen to spell a query are swallowed):
 * - ZPL (`anywhere`): at any position. `~HS`/`~HQES` are text, and a real printer runs `~` commands at once.
 * - ESC/POS, TSPL, CPCL: only at the edges of a TCP chunk: queries that start it (one after the other), and
 *   queries that end it. A sender waits for the reply after a query, so a query is always the last bytes of
 *   its chunk, even when TCP delivers it together with the tail of a job. Query bytes in the middle of a chunk
 *   are print data and get no reply; image data that happens to start or end a chunk with query bytes is
 *   taken as a query (for DLE EOT n: about 8 in 2^24 chunks of random data).
 * A query cut across chunks (`10` | `04 01`, `~H` | `QES`) is held back until the rest arrives; if the next
 * bytes do not complete it, the held bytes are print data after all. `end()` flushes what is held. For the
 * binary languages that holds only where a query may start, so a query that follows print data in one chunk
 * AND is cut by the chunk's end is not recognised.
 */
export class QuerySplitter {
  #held: Buffer = EMPTY
  readonly #status: LanguageStatus

  constructor(status: LanguageStatus) {
    this.#status = status
  }

  push(chunk: Buffer): Piece[] {
    const data = this.#held.length > 0 ? Buffer.concat([this.#held, chunk]) : chunk
    this.#held = EMPTY
    const pieces: Piece[] = []
    const print = (from: number, to: number) => {
      if (to > from) pieces.push({ kind: 'print', bytes: Buffer.from(data.subarray(from, to)) })
    }
    let printFrom = 0
    let at = 0
    while (at < data.length) {
      const match = this.#matchAt(data, at)
      if (match === 'partial') {
        print(printFrom, at)
        this.#held = Buffer.from(data.subarray(at))
        return pieces
      }
      if (match !== null) {
        print(printFrom, at)
        pieces.push({ kind: 'query', query: match })
        at += match.bytes.length
        printFrom = at
        continue
      }
      if (!this.#status.anywhere) {
        const tail = this.#trailingQueries(data, at)
        print(printFrom, tail.start)
        for (const query of tail.queries) pieces.push({ kind: 'query', query })
        return pieces
      }
      at = this.#nextCandidate(data, at + 1)
    }
    print(printFrom, data.length)
    return pieces
  }

  /** The connection ended: whatever is held back was print data. */
  end(): Piece[] {
    const held = this.#held
    this.#held = EMPTY
    return held.length > 0 ? [{ kind: 'print', bytes: held }] : []
  }

  /** The complete queries that end `data` (after `from`), in order, and where the first of them starts. */
  #trailingQueries(data: Buffer, from: number): { start: number; queries: StatusQuery[] } {
    const queries: StatusQuery[] = []
    let end = data.length
    for (;;) {
      const query = this.#status.queries.find((q) => {
        const start = end - q.bytes.length
        return start > from && data.compare(q.bytes, 0, q.bytes.length, start, end) === 0
      })
      if (!query) return { start: end, queries }
      queries.unshift(query)
      end -= query.bytes.length
    }
  }

  /** The next position at or after `from` holding the first byte of some query (or the end). */
  #nextCandidate(data: Buffer, from: number): number {
    let next = data.length
    for (const query of this.#status.queries) {
      const found = data.indexOf(query.bytes[0]!, from)
      if (found >= 0 && found < next) next = found
    }
    return next
  }

  /** A query starting at `at`, `partial` when the data ends inside one, or null. */
  #matchAt(data: Buffer, at: number): StatusQuery | 'partial' | null {
    let partial = false
    for (const query of this.#status.queries) {
      const available = Math.min(query.bytes.length, data.length - at)
      if (data.compare(query.bytes, 0, available, at, at + available) !== 0) continue
      if (available === query.bytes.length) return query
      partial = true
    }
    return partial ? 'partial' : null
  }
}

import { type QueryOptions, replyAtTimeout, type Transport } from '../../../hub/transports/transport.ts'

/** What the scripted printer does with one request: reply with bytes, stay silent (null) or fail. */
export type ScriptedAnswer = Buffer | null | Error

/**
 * A Transport for parser-level tests: every query is answered by `answer(request)`, and the requests are
 * recorded. A reply that `isComplete` does not accept counts as silence, as it would after the timeout (or,
 * with `partial`, is what came by then).
 */
export class ScriptedTransport implements Transport {
  readonly description = 'scripted://printer'
  readonly requests: Buffer[] = []

  constructor(private readonly answer: (request: Buffer) => ScriptedAnswer) {}

  async open(): Promise<void> {}

  async write(): Promise<void> {}

  async query(request: Buffer, options: QueryOptions): Promise<Buffer | null> {
    this.requests.push(request)
    const answer = this.answer(request)
    if (answer instanceof Error) throw answer
    if (answer === null) return null
    return options.isComplete(answer) ? answer : replyAtTimeout([answer], options)
  }

  async close(): Promise<void> {}

  /** The requests as latin1 text (`~HQES`) or hex (`100401`), for assertions. */
  sent(encoding: 'latin1' | 'hex'): string[] {
    return this.requests.map((r) => r.toString(encoding))
  }
}

/**
 * How a printer answers requests of `size` bytes sent together in one write (ESC/POS `DLE EOT 1` to `4`):
 * each in order by `one`, up to the first it leaves unanswered; null when it answered none.
 */
export function answerEach(
  request: Buffer,
  size: number,
  one: (part: Buffer) => Buffer | null,
): Buffer | null {
  const replies: Buffer[] = []
  for (let at = 0; at < request.length; at += size) {
    const reply = one(request.subarray(at, at + size))
    if (reply === null) break
    replies.push(reply)
  }
  return replies.length > 0 ? Buffer.concat(replies) : null
}

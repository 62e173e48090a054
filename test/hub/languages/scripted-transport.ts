import type { Transport } from '../../../hub/transports/transport.ts'

/** What the scripted printer does with one request: reply with bytes, stay silent (null) or fail. */
export type ScriptedAnswer = Buffer | null | Error

/**
 * A Transport for parser-level tests: every query is answered by `answer(request)`, and the requests are
 * recorded. A reply that `isComplete` does not accept counts as silence, as it would after the timeout.
 */
export class ScriptedTransport implements Transport {
  readonly description = 'scripted://printer'
  readonly requests: Buffer[] = []

  constructor(private readonly answer: (request: Buffer) => ScriptedAnswer) {}

  async open(): Promise<void> {}

  async write(): Promise<void> {}

  async query(request: Buffer, options: { isComplete: (reply: Buffer) => boolean }): Promise<Buffer | null> {
    this.requests.push(request)
    const answer = this.answer(request)
    if (answer instanceof Error) throw answer
    return answer !== null && options.isComplete(answer) ? answer : null
  }

  async close(): Promise<void> {}

  /** The requests as latin1 text (`~HQES`) or hex (`100401`), for assertions. */
  sent(encoding: 'latin1' | 'hex'): string[] {
    return this.requests.map((r) => r.toString(encoding))
  }
}

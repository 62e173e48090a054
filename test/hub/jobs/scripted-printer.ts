import type { QueryOptions, Transport } from '../../../hub/transports/transport.ts'
import { answerEach, ScriptedTransport } from '../languages/scripted-transport.ts'

/** ESC/POS DLE EOT replies (Epson ESC/POS reference, DLE EOT n): bits 1 and 4 are always set (0x12). */
const READY = Buffer.from([0x12])
/** DLE EOT 4 with bits 5 and 6 set: paper not present. */
const PAPER_OUT = Buffer.from([0x12 | 0x60])

/** What the scripted printer shows; the test changes it while a job runs (paper loaded, cable pulled). */
export interface PrinterCondition {
  paper: 'in' | 'out'
  /** Status requests get no reply, as from many cheap network printers. */
  silent?: boolean
  /** `open` rejects with this: the printer cannot be reached. */
  openError?: Error
  /** `write` rejects with this: the printer stopped taking bytes. */
  writeError?: Error
}

/**
 * An ESC/POS printer for worker and agent tests: it answers DLE EOT status requests from its condition (through
 * a ScriptedTransport, which records them) and records every byte written to it.
 */
export class ScriptedPrinter implements Transport {
  readonly description = 'scripted://escpos-printer'
  readonly written: Buffer[] = []
  closes = 0
  readonly #status: ScriptedTransport

  constructor(readonly condition: PrinterCondition = { paper: 'in' }) {
    // DLE EOT n (10 04 n): n = 4 is the paper roll sensor; the others report nothing wrong.
    this.#status = new ScriptedTransport((request) =>
      condition.silent
        ? null
        : answerEach(request, 3, (query) =>
            query[2] === 4 && condition.paper === 'out' ? PAPER_OUT : READY,
          ),
    )
  }

  async open(): Promise<void> {
    if (this.condition.openError) throw this.condition.openError
  }

  async write(bytes: Buffer): Promise<void> {
    if (this.condition.writeError) throw this.condition.writeError
    this.written.push(Buffer.from(bytes))
  }

  query(request: Buffer, options: QueryOptions) {
    return this.#status.query(request, options)
  }

  async close(): Promise<void> {
    this.closes++
  }

  /** The status requests, as ScriptedTransport.sent gives them. */
  sent(encoding: 'latin1' | 'hex'): string[] {
    return this.#status.sent(encoding)
  }

  /** Everything the printer received, in order. */
  bytes(): Buffer {
    return Buffer.concat(this.written)
  }
}

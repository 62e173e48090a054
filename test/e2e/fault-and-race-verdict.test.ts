import { describe, expect, it } from 'vitest'
import type { PrintJob } from '../../protocol/print-job.ts'
import { type JobTrace, judge } from './fault-and-race-verdict.ts'
import { namedReceipt } from './receipts.ts'

/** The fault-and-race verdict catches each way the API and the paper can disagree (no processes needed). */
function trace(n: number, extra: Partial<JobTrace> = {}): JobTrace {
  const { bytes, head } = namedReceipt(`JOB-7-${n}`)
  return {
    n,
    key: `k-${n}`,
    printer: 0,
    payload: bytes,
    head,
    id: `id-${n}`,
    resent: null,
    cancel: null,
    ...extra,
  }
}

function job(n: number, status: PrintJob['status'], failure_reason: string | null = null): PrintJob {
  return { print_job_id: `id-${n}`, status, failure_reason } as PrintJob
}

const paper = (...parts: Buffer[]) => [Buffer.concat(parts), Buffer.alloc(0)]
const whole = (n: number) => namedReceipt(`JOB-7-${n}`).bytes
const partial = (n: number) => whole(n).subarray(0, 14)

describe('fault-and-race verdict', () => {
  it('accepts what the API promises', () => {
    const cancel = {
      mode: 'soon' as const,
      status: 200,
      answered: 'cancelled',
      errorCode: null,
      unanswered: 0,
    }
    const lost = {
      mode: 'on-first-byte' as const,
      status: 409,
      answered: 'printing',
      errorCode: 'print_job_not_cancellable',
      unanswered: 0,
    }
    const { violations, figures } = judge(
      [
        trace(1),
        trace(2, { cancel }),
        trace(3),
        trace(4),
        trace(5, { cancel: lost }),
        trace(10, { resent: 'same' }),
      ],
      [
        job(1, 'printed'),
        job(2, 'cancelled'),
        job(3, 'failed', 'interrupted'),
        job(4, 'failed', 'interrupted'),
        job(5, 'printed'),
        job(10, 'printed'),
      ],
      paper(whole(1), partial(3), whole(5), whole(10)),
    )
    expect(violations).toEqual([])
    expect(figures).toMatchObject({
      printed: 3,
      cancelled: 1,
      interrupted: 2,
      interrupted_with_bytes: 1,
      cancels_409: 1,
    })
  })

  it('catches every disagreement', () => {
    const cancel = {
      mode: 'at-once' as const,
      status: 200,
      answered: 'cancelled',
      errorCode: null,
      unanswered: 0,
    }
    const { violations } = judge(
      [
        trace(1), // printed twice
        trace(2, { cancel }), // cancelled, but its head reached paper
        trace(3), // failed (not interrupted) with bytes
        trace(4), // printed, no bytes
        trace(5), // never final
        trace(6), // lost
        trace(7, { resent: 'different' }),
        trace(8, { printer: 1 }), // printed on the other printer
      ],
      [
        job(1, 'printed'),
        job(2, 'cancelled'),
        job(3, 'failed', 'expired'),
        job(4, 'printed'),
        job(5, 'reserved'),
        job(7, 'printed'),
        job(8, 'printed'),
        job(99, 'printed'),
      ],
      paper(whole(1), whole(1), partial(2), partial(3), whole(7), whole(8)),
    )
    const said = violations.join('\n')
    for (const expected of [
      /job 1 .*printed more than once/,
      /job 2 .*reported cancelled, but it reached the printer/,
      /job 3 .*reported failed \(expired\)/,
      /job 4 .*not exactly one whole copy/,
      /job 5 .*never reached a final status/,
      /job 6 .*lost/,
      /job 7 .*another job/,
      /job 8 .*reached another printer/,
      /id-99 .*second job/,
    ])
      expect(said).toMatch(expected)
  })

  it('judges a request the cloud took and the hub’s LAN printed by the job that printed it', () => {
    const dropped = { ...job(1, 'cancelled'), duplicate_of: 'id-9' }
    const printedOnLan = { ...job(9, 'printed'), duplicate_of: null }
    // Answered by the cloud (its copy was dropped), resent to the LAN (the job that printed).
    const { violations, figures } = judge(
      [trace(1, { resent: 'different', resentId: 'id-9' })],
      [dropped, printedOnLan],
      paper(whole(1)),
    )
    expect(violations).toEqual([])
    expect(figures).toMatchObject({ printed: 1, keys_with_two_jobs: 0, dropped_as_duplicates: 1 })
    // The cloud's copy never answered to anyone is still its dropped duplicate, not a second job.
    expect(judge([trace(1, { id: 'id-9' })], [dropped, printedOnLan], paper(whole(1))).violations).toEqual([])
    // A second job that is not a dropped duplicate is.
    const second = { ...job(2, 'cancelled'), duplicate_of: null }
    expect(
      judge([trace(1, { id: 'id-9' })], [second, printedOnLan], paper(whole(1))).violations,
    ).toHaveLength(1)
  })
})

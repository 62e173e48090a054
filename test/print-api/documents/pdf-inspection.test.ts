import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ApiError } from '../../../print-api/api-error.ts'
import { ghostscriptArgs } from '../../../print-api/documents/pdf-inspection.ts'
import { inspectorRig } from './inspector-rig.ts'
import { ghostscriptPdf, handWrittenPdf, slowPdf } from './pdf-fixtures.ts'

// Real Ghostscript (Debian package `ghostscript`); every inspector made here is closed after its test.

const ACCOUNT = 'account-a'
const rig = inspectorRig('pdf-inspection-', {
  timeoutMs: 10_000,
  maxConcurrent: 2,
  maxQueued: 4,
  maxQueuedPerAccount: 4,
})
const { inspector, file } = rig
async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    return error as ApiError
  }
  throw new Error('expected the inspection to be refused')
}

/** Command lines of processes still running with an argument under the test directory (read from /proc). */
async function strayProcesses(): Promise<string[]> {
  const found: string[] = []
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')
    if (cmdline.includes(rig.dir)) found.push(cmdline.replaceAll('\0', ' '))
  }
  return found
}

afterAll(async () => {
  await new Promise((done) => setTimeout(done, 100))
  expect(await strayProcesses()).toEqual([])
})

describe('PDF inspection with Ghostscript', () => {
  it('always runs Ghostscript in SAFER mode on the nullpage device', () => {
    const args = ghostscriptArgs('doc.pdf')
    expect(args).toContain('-dSAFER')
    expect(args).toContain('-dPDFSTOPONERROR')
    expect(args).toContain('-sDEVICE=nullpage')
    expect(args.some((arg) => /NOSAFER|DELAYSAFER|permit-file/i.test(arg))).toBe(false)
    expect(args.at(-1)).toMatch(/^\/.*doc\.pdf$/)
  })

  it('counts the pages of a valid one-page and a three-page PDF', async () => {
    const one = await file('one.pdf', handWrittenPdf(['0 0 m 100 100 l S']))
    const three = await ghostscriptPdf(rig.dir, 'three', 3)
    const started = performance.now()
    expect(await inspector().inspect(one, ACCOUNT)).toEqual({ pages: 1 })
    const elapsed = performance.now() - started
    expect(await inspector().inspect(three, ACCOUNT)).toEqual({ pages: 3 })
    console.info(`inspection of a 1-page PDF: ${elapsed.toFixed(0)} ms`)
  })

  it('opens a PDF that has only an owner password', async () => {
    const ownerOnly = await ghostscriptPdf(rig.dir, 'owner-only', 1, ['-sOwnerPassword=o'])
    expect(await inspector().inspect(ownerOnly, ACCOUNT)).toEqual({ pages: 1 })
  })

  it('refuses a PDF that needs a password with 422 pdf_encrypted', async () => {
    const encrypted = await ghostscriptPdf(rig.dir, 'encrypted', 1, ['-sOwnerPassword=o', '-sUserPassword=u'])
    const error = await refusal(inspector().inspect(encrypted, ACCOUNT))
    expect([error.status, error.code]).toEqual([422, 'pdf_encrypted'])
  })

  it.each([
    [
      'truncated (no xref, no trailer)',
      (pdf: Buffer) => pdf.subarray(0, Math.floor(pdf.length * 0.6)),
      'repaired',
    ],
    [
      'cut inside a content stream',
      (pdf: Buffer) => pdf.subarray(0, pdf.indexOf('stream') + 12),
      'render_failed',
    ],
    [
      'garbage after %PDF-',
      () => Buffer.from('%PDF-1.4\n%garbage \x00\x01\x02 lorem ipsum\n', 'latin1'),
      'render_failed',
    ],
    [
      'a wrong startxref offset',
      (pdf: Buffer) =>
        Buffer.from(pdf.toString('latin1').replace(/startxref\n(\d+)/, 'startxref\n9$1'), 'latin1'),
      'repaired',
    ],
    ['a PDF with no pages', () => handWrittenPdf([]), 'no_pages'],
  ])('refuses a PDF with %s as 422 pdf_invalid', async (name, damage, reason) => {
    const pdf = await readFile(await ghostscriptPdf(rig.dir, 'base', 3))
    const path = await file(`${name.replace(/\W+/g, '-')}.pdf`, damage(pdf))
    const error = await refusal(inspector().inspect(path, ACCOUNT))
    expect([error.status, error.code, error.details?.reason]).toEqual([422, 'pdf_invalid', reason])
  })

  it('refuses PostScript that carries a PDF header before running Ghostscript', async () => {
    const path = await file('fake.pdf', Buffer.from('%!PS\n%PDF-1.4\n(hi) print showpage\n'))
    const error = await refusal(inspector().inspect(path, ACCOUNT))
    expect([error.code, error.details?.reason]).toEqual(['pdf_invalid', 'not_a_pdf'])
  })

  it('kills Ghostscript at the deadline and answers 503 with Retry-After', async () => {
    const slow = await file('slow.pdf', slowPdf())
    const started = performance.now()
    const error = await refusal(inspector({ timeoutMs: 300 }).inspect(slow, ACCOUNT))
    expect(performance.now() - started).toBeLessThan(3000)
    expect([error.status, error.code, error.details?.reason]).toEqual([
      503,
      'inspection_unavailable',
      'timeout',
    ])
    expect(error.headers['Retry-After']).toMatch(/^[1-9]\d*$/)
  })

  it('answers 503 with Retry-After when timeoutMs is 1', async () => {
    const one = await file('quick.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const error = await refusal(inspector({ timeoutMs: 1 }).inspect(one, ACCOUNT))
    expect([error.status, error.details?.reason, error.headers['Retry-After']]).toEqual([503, 'timeout', '1'])
  })

  it('answers 503 queue_full past maxConcurrent running and maxQueued waiting, then serves the queue', async () => {
    const slow = await file('slow-queue.pdf', slowPdf())
    const quick = await file('quick-queue.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const busy = inspector({ timeoutMs: 1500, maxConcurrent: 1, maxQueued: 1 })
    const running = refusal(busy.inspect(slow, ACCOUNT))
    const queued = busy.inspect(quick, ACCOUNT)
    const error = await refusal(busy.inspect(quick, ACCOUNT))
    expect([error.status, error.code, error.details?.reason]).toEqual([
      503,
      'inspection_unavailable',
      'queue_full',
    ])
    expect(error.headers['Retry-After']).toBe('2')
    expect((await running).details?.reason).toBe('timeout')
    expect(await queued).toEqual({ pages: 1 })
  })

  it('answers 503 ghostscript_unavailable when Ghostscript cannot be started', async () => {
    const one = await file('nogs.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const error = await refusal(inspector({ gsPath: join(rig.dir, 'no-such-gs') }).inspect(one, ACCOUNT))
    expect([error.status, error.details?.reason]).toEqual([503, 'ghostscript_unavailable'])
    expect(Number(error.headers['Retry-After'])).toBeGreaterThanOrEqual(1)
  })

  it('close() kills running inspections and refuses queued ones', async () => {
    const slow = await file('slow-close.pdf', slowPdf())
    const closing = inspector({ maxConcurrent: 1, maxQueued: 2 })
    const running = refusal(closing.inspect(slow, ACCOUNT))
    const queued = refusal(closing.inspect(slow, ACCOUNT))
    await new Promise((done) => setTimeout(done, 100))
    closing.close()
    expect((await running).details?.reason).toBe('closed')
    expect((await queued).details?.reason).toBe('closed')
    expect((await refusal(closing.inspect(slow, ACCOUNT))).status).toBe(503)
  })

  it('gives each account its turn: one account flooding the queue does not hold back another account', async () => {
    const pdf = await file('fair.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const fair = inspector({ maxConcurrent: 1, maxQueued: 32, maxQueuedPerAccount: 8 })
    const finished: string[] = []
    const inspect = (account: string, name: string) =>
      fair.inspect(pdf, account).then((result) => {
        finished.push(name)
        return result
      })
    // Queued synchronously: A's first starts at once, A's next five wait, then B's one arrives.
    const all = [
      ...['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((name) => inspect('account-a', name)),
      inspect('account-b', 'b1'),
    ]
    expect(await Promise.all(all)).toEqual(Array(7).fill({ pages: 1 }))
    expect(finished).toEqual(['a1', 'b1', 'a2', 'a3', 'a4', 'a5', 'a6'])
  })

  it('alternates between accounts that both have work waiting', async () => {
    const pdf = await file('alternate.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const fair = inspector({ maxConcurrent: 1, maxQueued: 32, maxQueuedPerAccount: 8 })
    const finished: string[] = []
    const inspect = (account: string, name: string) =>
      fair.inspect(pdf, account).then(() => finished.push(name))
    await Promise.all([
      inspect('account-a', 'a1'),
      inspect('account-a', 'a2'),
      inspect('account-a', 'a3'),
      inspect('account-b', 'b1'),
      inspect('account-b', 'b2'),
      inspect('account-c', 'c1'),
    ])
    expect(finished).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3'])
  })

  it("answers 503 queue_full (scope account) to the account past its own cap, and still queues another account's PDF", async () => {
    const pdf = await file('capped.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const capped = inspector({ maxConcurrent: 1, maxQueued: 32, maxQueuedPerAccount: 2 })
    const accepted = [
      capped.inspect(pdf, 'account-a'), // runs
      capped.inspect(pdf, 'account-a'), // waits
      capped.inspect(pdf, 'account-a'), // waits
    ]
    const error = await refusal(capped.inspect(pdf, 'account-a'))
    expect([error.status, error.code, error.details]).toEqual([
      503,
      'inspection_unavailable',
      { reason: 'queue_full', scope: 'account' },
    ])
    expect(error.headers['Retry-After']).toBe('10')
    const other = capped.inspect(pdf, 'account-b')
    expect(await other).toEqual({ pages: 1 })
    expect(await Promise.all(accepted)).toEqual(Array(3).fill({ pages: 1 }))
  })
})

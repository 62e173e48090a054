import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  createPdfInspector,
  ghostscriptArgs,
  type PdfInspector,
} from '../../../cloud/documents/pdf-inspection.ts'
import { ApiError } from '../../../cloud/errors.ts'
import { ghostscriptPdf, handWrittenPdf, slowPdf } from './pdf-fixtures.ts'

// Real Ghostscript (Debian package `ghostscript`); every inspector made here is closed after its test.

let dir: string
const inspectors: PdfInspector[] = []

function inspector(options: Partial<Parameters<typeof createPdfInspector>[0]> = {}): PdfInspector {
  const made = createPdfInspector({ timeoutMs: 10_000, maxConcurrent: 2, maxQueued: 4, ...options })
  inspectors.push(made)
  return made
}

async function file(name: string, bytes: Buffer): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, bytes)
  return path
}

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
    if (cmdline.includes(dir)) found.push(cmdline.replaceAll('\0', ' '))
  }
  return found
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdf-inspection-'))
})

afterEach(() => {
  for (const made of inspectors.splice(0)) made.close()
})

afterAll(async () => {
  await new Promise((done) => setTimeout(done, 100))
  expect(await strayProcesses()).toEqual([])
  await rm(dir, { recursive: true, force: true })
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
    const three = await ghostscriptPdf(dir, 'three', 3)
    const started = performance.now()
    expect(await inspector().inspect(one)).toEqual({ pages: 1 })
    const elapsed = performance.now() - started
    expect(await inspector().inspect(three)).toEqual({ pages: 3 })
    console.info(`inspection of a 1-page PDF: ${elapsed.toFixed(0)} ms`)
  })

  it('opens a PDF that has only an owner password', async () => {
    const ownerOnly = await ghostscriptPdf(dir, 'owner-only', 1, ['-sOwnerPassword=o'])
    expect(await inspector().inspect(ownerOnly)).toEqual({ pages: 1 })
  })

  it('refuses a PDF that needs a password with 422 pdf_encrypted', async () => {
    const encrypted = await ghostscriptPdf(dir, 'encrypted', 1, ['-sOwnerPassword=o', '-sUserPassword=u'])
    const error = await refusal(inspector().inspect(encrypted))
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
    const pdf = await readFile(await ghostscriptPdf(dir, 'base', 3))
    const path = await file(`${name.replace(/\W+/g, '-')}.pdf`, damage(pdf))
    const error = await refusal(inspector().inspect(path))
    expect([error.status, error.code, error.details?.reason]).toEqual([422, 'pdf_invalid', reason])
  })

  it('refuses PostScript that carries a PDF header before running Ghostscript', async () => {
    const path = await file('fake.pdf', Buffer.from('%!PS\n%PDF-1.4\n(hi) print showpage\n'))
    const error = await refusal(inspector().inspect(path))
    expect([error.code, error.details?.reason]).toEqual(['pdf_invalid', 'not_a_pdf'])
  })

  it('kills Ghostscript at the deadline and answers 503 with Retry-After', async () => {
    const slow = await file('slow.pdf', slowPdf())
    const started = performance.now()
    const error = await refusal(inspector({ timeoutMs: 300 }).inspect(slow))
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
    const error = await refusal(inspector({ timeoutMs: 1 }).inspect(one))
    expect([error.status, error.details?.reason, error.headers['Retry-After']]).toEqual([503, 'timeout', '1'])
  })

  it('answers 503 queue_full past maxConcurrent running and maxQueued waiting, then serves the queue', async () => {
    const slow = await file('slow-queue.pdf', slowPdf())
    const quick = await file('quick-queue.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const busy = inspector({ timeoutMs: 1500, maxConcurrent: 1, maxQueued: 1 })
    const running = refusal(busy.inspect(slow))
    const queued = busy.inspect(quick)
    const error = await refusal(busy.inspect(quick))
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
    const error = await refusal(inspector({ gsPath: join(dir, 'no-such-gs') }).inspect(one))
    expect([error.status, error.details?.reason]).toEqual([503, 'ghostscript_unavailable'])
    expect(Number(error.headers['Retry-After'])).toBeGreaterThanOrEqual(1)
  })

  it('close() kills running inspections and refuses queued ones', async () => {
    const slow = await file('slow-close.pdf', slowPdf())
    const closing = inspector({ maxConcurrent: 1, maxQueued: 2 })
    const running = refusal(closing.inspect(slow))
    const queued = refusal(closing.inspect(slow))
    await new Promise((done) => setTimeout(done, 100))
    closing.close()
    expect((await running).details?.reason).toBe('closed')
    expect((await queued).details?.reason).toBe('closed')
    expect((await refusal(closing.inspect(slow))).status).toBe(503)
  })
})

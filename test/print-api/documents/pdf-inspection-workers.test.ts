import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../print-api/api-error.ts'
import { workerArgs } from '../../../print-api/documents/ghostscript-worker.ts'
import type { WarmPdfInspector } from '../../../print-api/documents/pdf-inspection.ts'
import { inspectorRig } from './inspector-rig.ts'
import { ghostscriptPdf, handWrittenPdf, slowPdf } from './pdf-fixtures.ts'

// The inspector's long-lived Ghostscript processes (real gs): one process takes document after document, and
// each document is judged on its own output.

const ACCOUNT = 'account-a'
const rig = inspectorRig('pdf-inspection-workers-', {
  timeoutMs: 10_000,
  maxConcurrent: 1,
  maxQueued: 4,
  maxQueuedPerAccount: 4,
})
const { inspector, file } = rig
/** The refusal's reason (pdf_invalid's details.reason, or the code of another refusal). */
async function outcome(promise: Promise<{ pages: number }>): Promise<number | string> {
  try {
    return (await promise).pages
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return error.code === 'pdf_invalid' ? String(error.details?.reason) : error.code
  }
}

/** True once the process has ended (a zombie counts as ended), polled for up to 3 s. */
async function ended(pid: number): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => '')
    if (stat === '' || /\) Z /.test(stat)) return true
    await new Promise((done) => setTimeout(done, 50))
  }
  return false
}

describe("the inspector's Ghostscript processes", () => {
  it('start Ghostscript in SAFER mode, reading only their own documents directory', () => {
    const args = workerArgs('/tmp/inspector-x')
    expect(args).toContain('-dSAFER')
    expect(args).toContain('-dPDFSTOPONERROR')
    expect(args).toContain('-sDEVICE=nullpage')
    expect(args.some((arg) => /NOSAFER|DELAYSAFER/i.test(arg))).toBe(false)
    expect(args.filter((arg) => /permit/i.test(arg))).toEqual(['--permit-file-read=/tmp/inspector-x/'])
  })

  it('run without the GS_* variables of the parent (GS_OPTIONS could turn SAFER off)', async () => {
    const quick = await file('environment.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    process.env.GS_OPTIONS = '-dNOSAFER'
    let warm: WarmPdfInspector
    try {
      warm = inspector()
      expect(await outcome(warm.inspect(quick, ACCOUNT))).toBe(1)
    } finally {
      delete process.env.GS_OPTIONS
    }
    const environ = await readFile(`/proc/${warm.pids[0]}/environ`, 'latin1')
    expect(environ.split('\0').filter((entry) => entry.startsWith('GS_'))).toEqual([])
    expect(environ).toContain('PATH=')
  })

  it('judge document after document in one process, each on its own output', async () => {
    const base = await readFile(await ghostscriptPdf(rig.dir, 'base', 3))
    const good = await file('good.pdf', handWrittenPdf(['0 0 m 100 100 l S']))
    const three = await file('three.pdf', base)
    const truncated = await file('truncated.pdf', base.subarray(0, Math.floor(base.length * 0.6)))
    const cut = await file('cut.pdf', base.subarray(0, base.indexOf('stream') + 12))
    const encrypted = await ghostscriptPdf(rig.dir, 'encrypted', 1, ['-sOwnerPassword=o', '-sUserPassword=u'])
    const empty = await file('empty.pdf', handWrittenPdf([]))
    const warm = inspector()
    const sequence = [good, truncated, good, cut, three, encrypted, good, empty, truncated, three]
    const results: (number | string)[] = []
    const pids = new Set<number>()
    for (const path of sequence) {
      results.push(await outcome(warm.inspect(path, ACCOUNT)))
      for (const pid of warm.pids) pids.add(pid)
    }
    expect(results).toEqual([
      1,
      'repaired',
      1,
      'render_failed',
      3,
      'pdf_encrypted',
      1,
      'no_pages',
      'repaired',
      3,
    ])
    expect(pids.size).toBe(1)
  })

  it('replace a process killed at the deadline, and the next PDF is inspected by a fresh one', async () => {
    const slow = await file('slow.pdf', slowPdf())
    const quick = await file('quick.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const warm = inspector({ timeoutMs: 1000 })
    expect(await outcome(warm.inspect(quick, ACCOUNT))).toBe(1)
    const [first] = warm.pids
    expect(await outcome(warm.inspect(slow, ACCOUNT))).toBe('inspection_unavailable')
    expect(await ended(first!)).toBe(true)
    expect(await outcome(warm.inspect(quick, ACCOUNT))).toBe(1)
    expect(warm.pids).toHaveLength(1)
    expect(warm.pids).not.toContain(first)
  })

  it('give way to a fresh process after documentsPerWorker documents', async () => {
    const quick = await file('recycled.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const warm = inspector({ documentsPerWorker: 2 })
    await warm.inspect(quick, ACCOUNT)
    const [first] = warm.pids
    await warm.inspect(quick, ACCOUNT)
    expect(await ended(first!)).toBe(true)
    expect(await outcome(warm.inspect(quick, ACCOUNT))).toBe(1)
    expect(warm.pids).toHaveLength(1)
    expect(warm.pids).not.toContain(first)
  })

  it('end after workerIdleMs without a document', async () => {
    const quick = await file('idle.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const warm = inspector({ workerIdleMs: 200 })
    await warm.inspect(quick, ACCOUNT)
    const [first] = warm.pids
    expect(await ended(first!)).toBe(true)
    expect(warm.pids).toEqual([])
    expect(await outcome(warm.inspect(quick, ACCOUNT))).toBe(1)
  })

  it('are all ended by close(), idle and busy alike', async () => {
    const quick = await file('close-quick.pdf', handWrittenPdf(['0 0 m 1 1 l S']))
    const slow = await file('close-slow.pdf', slowPdf())
    const warm = inspector({ maxConcurrent: 2 })
    await Promise.all([warm.inspect(quick, ACCOUNT), warm.inspect(quick, ACCOUNT)])
    const running = outcome(warm.inspect(slow, ACCOUNT))
    await new Promise((done) => setTimeout(done, 100))
    const pids = warm.pids
    expect(pids).toHaveLength(2)
    warm.close()
    expect(await running).toBe('inspection_unavailable')
    for (const pid of pids) expect(await ended(pid)).toBe(true)
    expect(warm.pids).toEqual([])
  })
})

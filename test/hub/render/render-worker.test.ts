import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ghostscriptArgs } from '../../../hub/render/ghostscript-policy.ts'
import type { GreyPage } from '../../../hub/render/grey-page.ts'
import { RenderError } from '../../../hub/render/render-error.ts'
import { RenderWorker } from '../../../hub/render/render-worker.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { mm, pagesPdf, withEndlessPage } from './pdf-fixtures.ts'

const dir = tempDir('print-hub-render-test-')
afterAll(() => dir.remove())
const receipt = { width: mm(58), height: mm(40) }

function file(name: string, bytes: Buffer | string): string {
  const filePath = path.join(dir.path, name)
  writeFileSync(filePath, bytes)
  return filePath
}

/** Black in Ghostscript's grey page (0 = black). */
function isBlack(page: GreyPage, x: number, y: number): boolean {
  return page.data[y * page.width + x]! < 128
}

async function collect(pages: AsyncIterable<GreyPage>): Promise<GreyPage[]> {
  const all: GreyPage[] = []
  for await (const page of pages) all.push(page)
  return all
}

async function failure(pages: AsyncIterable<GreyPage>): Promise<{ error: RenderError; pagesBefore: number }> {
  let pagesBefore = 0
  try {
    for await (const _ of pages) pagesBefore++
  } catch (error) {
    expect(error).toBeInstanceOf(RenderError)
    return { error: error as RenderError, pagesBefore }
  }
  throw new Error('the render did not fail')
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

// Page 1: a black 1 in × 1 in square in the bottom-left corner. Page 2: a black bar, 40 pt high, across the
// top. Both 58 mm × 40 mm: 164.41 × 113.39 pt, at 203 dpi 463.6 × 319.7 → 464 × 320 dots.
const twoPages = pagesPdf([
  { ...receipt, content: '0 0 0 rg 0 0 72 72 re f' },
  {
    ...receipt,
    content: `0 0 0 rg 0 ${(receipt.height - 40).toFixed(3)} ${receipt.width.toFixed(3)} 40 re f`,
  },
])

describe('RenderWorker (real Ghostscript through ghostscript4js)', () => {
  const worker = new RenderWorker()

  beforeAll(() => worker.start())
  afterAll(() => worker.stop())

  it('renders each page at its size in dots, black where the PDF paints and white elsewhere', async () => {
    const pages = await collect(worker.render(file('two.pdf', twoPages), { dpi: 203, deadlineMs: 20_000 }))
    expect(pages.map(({ width, height }) => [width, height])).toEqual([
      [464, 320],
      [464, 320],
    ])
    const [first, second] = pages as [GreyPage, GreyPage]
    expect(first.data.length).toBe(464 * 320)
    // Not anti-aliased: every dot is pure black or pure white.
    expect(first.data.every((grey) => grey === 0 || grey === 255)).toBe(true)
    // 72 pt = 203 dots: the square covers x 0–202 and, counted from the top, y 117–319.
    expect([isBlack(first, 5, 315), isBlack(first, 100, 200), isBlack(first, 195, 125)]).toEqual([
      true,
      true,
      true,
    ])
    expect([isBlack(first, 210, 300), isBlack(first, 100, 110), isBlack(first, 460, 5)]).toEqual([
      false,
      false,
      false,
    ])
    // 40 pt = 112.8 dots: the bar covers rows 0–112 across the whole width.
    expect([isBlack(second, 0, 0), isBlack(second, 463, 100), isBlack(second, 232, 50)]).toEqual([
      true,
      true,
      true,
    ])
    expect([isBlack(second, 5, 315), isBlack(second, 232, 120), isBlack(second, 463, 319)]).toEqual([
      false,
      false,
      false,
    ])
  })

  it('renders one document at a time: two asked at once both come out whole', async () => {
    const a = file('a.pdf', twoPages)
    const b = file('b.pdf', twoPages)
    const [first, second] = await Promise.all([
      collect(worker.render(a, { dpi: 203, deadlineMs: 20_000 })),
      collect(worker.render(b, { dpi: 203, deadlineMs: 20_000 })),
    ])
    expect([first.length, second.length]).toEqual([2, 2])
    expect(Buffer.from(second[1]!.data).equals(Buffer.from(first[1]!.data))).toBe(true)
  })

  it('kills Ghostscript when the caller stops taking pages, and renders the next PDF', async () => {
    const pid = worker.pid!
    const pdf = withEndlessPage([{ ...receipt, content: '0 0 0 rg 0 0 72 72 re f' }])
    for await (const page of worker.render(file('abandoned.pdf', pdf), { dpi: 203, deadlineMs: 60_000 })) {
      expect(page.width).toBe(464)
      break
    }
    expect(processGone(pid)).toBe(true)
    expect(
      await collect(worker.render(file('after-abandoned.pdf', twoPages), { dpi: 203, deadlineMs: 20_000 })),
    ).toHaveLength(2)
  })

  it('refuses bytes that are not a PDF before Ghostscript sees them', async () => {
    const { error } = await failure(
      worker.render(file('garbage.bin', Buffer.from('\x00\xff garbage \x13\x37'.repeat(200), 'latin1')), {
        dpi: 203,
        deadlineMs: 20_000,
      }),
    )
    expect([error.code, error.reason]).toEqual(['render_failed', 'not_a_pdf'])
  })

  it('fails a PDF header followed by garbage with Ghostscript’s error, and renders the next PDF', async () => {
    const pid = worker.pid
    const { error } = await failure(
      worker.render(file('broken.pdf', `%PDF-1.4\n${'\x00\xff garbage \x13\x37'.repeat(200)}`), {
        dpi: 203,
        deadlineMs: 20_000,
      }),
    )
    expect([error.code, error.reason]).toEqual(['render_failed', 'ghostscript_error'])
    const pages = await collect(
      worker.render(file('after-broken.pdf', twoPages), { dpi: 203, deadlineMs: 20_000 }),
    )
    expect(pages).toHaveLength(2)
    expect(worker.pid).not.toBe(pid)
  })

  it('kills endless content at the deadline, restarts the worker, and renders the next PDF', async () => {
    const pid = worker.pid!
    const { error } = await failure(
      worker.render(file('endless.pdf', withEndlessPage([])), {
        dpi: 203,
        deadlineMs: 500,
      }),
    )
    expect([error.code, error.reason]).toEqual(['render_failed', 'deadline'])
    const pages = await collect(
      worker.render(file('after-endless.pdf', twoPages), { dpi: 203, deadlineMs: 20_000 }),
    )
    expect(pages.map(({ width, height }) => [width, height])).toEqual([
      [464, 320],
      [464, 320],
    ])
    expect(worker.pid).not.toBe(pid)
    expect(processGone(pid)).toBe(true)
  })

  it('streams: page 1 arrives while Ghostscript is still on page 2, which then misses the deadline', async () => {
    const pdf = withEndlessPage([{ ...receipt, content: '0 0 0 rg 0 0 72 72 re f' }])
    const { error, pagesBefore } = await failure(
      worker.render(file('first-then-endless.pdf', pdf), { dpi: 203, deadlineMs: 2_000 }),
    )
    expect([pagesBefore, error.reason]).toEqual([1, 'deadline'])
  })

  it('reads a page once Ghostscript has written it, without waiting for the next poll', async () => {
    const watching = new RenderWorker({ pollIntervalMs: 600_000 })
    try {
      await watching.start()
      const pdf = withEndlessPage([{ ...receipt, content: '0 0 0 rg 0 0 72 72 re f' }])
      const started = Date.now()
      const pages = watching
        .render(file('watched.pdf', pdf), { dpi: 203, deadlineMs: 10_000 })
        [Symbol.asyncIterator]()
      const first = await pages.next()
      // Without the watch, page 1 would be read at the poll or when Ghostscript ends: 10 s, at the deadline.
      expect([first.done, Date.now() - started < 5_000]).toEqual([false, true])
      await pages.return?.()
    } finally {
      await watching.stop()
    }
  })

  it('refuses a page over 2000 mm at the dpi asked', async () => {
    // 14,400 pt = 200 in = 5,080 mm: 14,400 dots at 72 dpi, over the bound of 5,669.
    const huge = pagesPdf([{ width: 14_400, height: 14_400, content: '0 0 0 rg 0 0 72 72 re f' }])
    const { error } = await failure(worker.render(file('huge.pdf', huge), { dpi: 72, deadlineMs: 20_000 }))
    expect([error.code, error.reason]).toEqual(['render_failed', 'page_too_big'])
    expect(
      await collect(worker.render(file('after-huge.pdf', twoPages), { dpi: 203, deadlineMs: 20_000 })),
    ).toHaveLength(2)
  })
})

describe('RenderWorker bounds and conversions', () => {
  const worker = new RenderWorker()
  afterAll(() => worker.stop())

  it('refuses a page over 64 million dots even when no side is over 2000 mm', async () => {
    // 1,000 mm square (2,834.6 pt) at 300 dpi: 11,811 × 11,811 dots = 139 million.
    const side = mm(1000)
    const big = pagesPdf([{ width: side, height: side, content: '0 0 0 rg 0 0 72 72 re f' }])
    const { error } = await failure(worker.render(file('big.pdf', big), { dpi: 300, deadlineMs: 20_000 }))
    expect([error.reason, error.message]).toEqual([
      'page_too_big',
      expect.stringMatching(/11811 × 11811 dots/),
    ])
  })

  it('converts a whole document into one file with the arguments given, and refuses arguments without -dSAFER', async () => {
    const output = path.join(dir.path, 'converted.pgm')
    const pdf = file('convert.pdf', twoPages)
    await worker.convert(
      pdf,
      [
        ...ghostscriptArgs(pdf, dir.path, 72).slice(0, -3),
        `-sOutputFile=${output}`,
        '-dFirstPage=2',
        '-f',
        pdf,
      ],
      20_000,
    )
    expect(readFileSync(output, 'latin1').slice(0, 2)).toBe('P5')
    const unsafe = ['gs', '-dNOSAFER', '-dBATCH', '-sDEVICE=pgmraw', `-sOutputFile=${output}`, pdf]
    await expect(worker.convert(pdf, unsafe, 20_000)).rejects.toMatchObject({ reason: 'bad_options' })
  })
})

describe('RenderWorker environment', () => {
  it('runs Ghostscript without the GS_* variables of the hub', async () => {
    // Were GS_OPTIONS passed on, Ghostscript would take it as arguments and render page 2 only.
    process.env.GS_OPTIONS = '-dFirstPage=2'
    const worker = new RenderWorker()
    try {
      await worker.start()
    } finally {
      delete process.env.GS_OPTIONS
    }
    try {
      expect(
        await collect(worker.render(file('env.pdf', twoPages), { dpi: 203, deadlineMs: 20_000 })),
      ).toHaveLength(2)
    } finally {
      await worker.stop()
    }
  })
})

describe('RenderWorker.stop', () => {
  it('leaves no worker process behind', async () => {
    const worker = new RenderWorker()
    await worker.start()
    const pid = worker.pid!
    expect(processGone(pid)).toBe(false)
    await worker.stop()
    expect(processGone(pid)).toBe(true)
    expect(worker.pid).toBeUndefined()
    const { error } = await failure(
      worker.render(file('stopped.pdf', twoPages), { dpi: 203, deadlineMs: 1_000 }),
    )
    expect(error.reason).toBe('worker_unavailable')
  })
})

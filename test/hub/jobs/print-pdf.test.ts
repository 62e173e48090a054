import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PrinterWriteError, printPdf } from '../../../hub/jobs/print-pdf.ts'
import { escposRaster } from '../../../hub/languages/escpos.ts'
import { zplRaster } from '../../../hub/languages/zpl.ts'
import { createGreyPage, type GreyPage } from '../../../hub/render/grey-page.ts'
import type { MediaPlan } from '../../../hub/render/media-plan.ts'
import { RenderError } from '../../../hub/render/render-error.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { decodeZplRaster } from '../../simulators/decoders/zpl-raster.ts'

const dir = tempDir('print-hub-print-pdf-test-')
afterAll(() => dir.remove())

/** 16 × 8 dots, 1:1, no margins: a page of that size is printed as it is. */
const plan: MediaPlan = {
  dpi: 203,
  mediaWidth: 16,
  mediaHeight: 8,
  imageWidth: 16,
  imageLeft: 0,
  margins: { top: 0, right: 0, bottom: 0, left: 0 },
  offsetX: 0,
  offsetY: 0,
  scaleMode: 'none',
  orientation: 'default',
}

/** Page n: black in its first n rows, so that pages can be told apart after decoding. */
function greyPage(n: number): GreyPage {
  const page = createGreyPage(16, 8)
  ;(page.data as Uint8Array).fill(0, 0, 16 * n)
  return page
}

/** A stand-in render worker: yields the pages given, each once `release(n)` allows it, then maybe fails. */
function scriptedRenderer(pageCount: number, failAfter?: number) {
  const gates: (() => void)[] = []
  const opened = Array.from({ length: pageCount + 1 }, (_, i) => new Promise<void>((r) => (gates[i] = r)))
  const state = { yielded: 0, finished: false }
  return {
    state,
    release: (n: number) => gates[n - 1]!(),
    releaseAll: () => {
      for (const open of gates) open()
    },
    renderer: {
      render: () =>
        (async function* () {
          try {
            for (let n = 1; n <= pageCount; n++) {
              await opened[n - 1]
              if (failAfter !== undefined && n > failAfter)
                throw new RenderError('ghostscript_error', `page ${n} is broken`)
              state.yielded = n
              yield greyPage(n)
            }
          } finally {
            state.finished = true
          }
        })(),
    },
  }
}

function pdfFile(): string {
  const file = path.join(dir.path, `doc-${Math.random()}.pdf`)
  writeFileSync(file, '%PDF-1.4 stand-in')
  return file
}

function job(renderer: ReturnType<typeof scriptedRenderer>['renderer'], changes = {}) {
  const written: Buffer[] = []
  return {
    written,
    job: {
      file: pdfFile(),
      plan,
      encoding: zplRaster,
      copies: 1,
      renderer,
      deadlineMs: 10_000,
      start: () => true,
      write: async (bytes: Buffer) => {
        written.push(bytes)
      },
      ...changes,
    },
  }
}

const rowsOf = (bytes: Buffer) =>
  decodeZplRaster(bytes).map(({ page, quantity }) => {
    let black = 0
    for (let y = 0; y < page.height; y++) if (page.data[y * 2]) black++
    return { page: black, quantity }
  })

describe('printPdf', () => {
  it('streams: page 1 is at the printer before page 2 is rendered', async () => {
    const script = scriptedRenderer(3)
    const { job: print, written } = job(script.renderer)
    script.release(1)
    const done = printPdf(print)
    await expect.poll(() => written.length).toBe(1)
    expect(script.state.yielded).toBe(1)
    script.releaseAll()
    expect(await done).toBe(3)
    expect(rowsOf(Buffer.concat(written))).toEqual([
      { page: 1, quantity: 1 },
      { page: 2, quantity: 1 },
      { page: 3, quantity: 1 },
    ])
  })

  it('collates copies of a longer document and prints a one-page document with the printer’s quantity', async () => {
    const three = scriptedRenderer(2)
    three.releaseAll()
    const { job: twoCopies, written } = job(three.renderer, { copies: 2 })
    expect(await printPdf(twoCopies)).toBe(2)
    expect(rowsOf(Buffer.concat(written)).map((p) => p.page)).toEqual([1, 2, 1, 2])

    const one = scriptedRenderer(1)
    one.releaseAll()
    const { job: threeCopies, written: label } = job(one.renderer, { copies: 3 })
    expect(await printPdf(threeCopies)).toBe(1)
    expect(rowsOf(Buffer.concat(label))).toEqual([{ page: 1, quantity: 3 }])
  })

  it('sends the language’s prologue once, before the first page (ESC/POS ESC @)', async () => {
    const script = scriptedRenderer(2)
    script.releaseAll()
    const { job: print, written } = job(script.renderer, { encoding: escposRaster })
    await printPdf(print)
    expect(written[0]).toEqual(Buffer.from([0x1b, 0x40]))
    expect(written.filter((bytes) => bytes.equals(Buffer.from([0x1b, 0x40])))).toHaveLength(1)
  })

  it('prints nothing and stops the render when start() says no (the job was cancelled)', async () => {
    const script = scriptedRenderer(3)
    script.releaseAll()
    const { job: print, written } = job(script.renderer, { start: () => false })
    expect(await printPdf(print)).toBeNull()
    expect(written).toEqual([])
    expect(script.state.finished).toBe(true)
  })

  it('throws the RenderError of a page that cannot be rendered, after the pages before it printed', async () => {
    const script = scriptedRenderer(3, 1)
    script.releaseAll()
    const { job: print, written } = job(script.renderer)
    await expect(printPdf(print)).rejects.toMatchObject({ reason: 'ghostscript_error' })
    expect(rowsOf(Buffer.concat(written))).toEqual([{ page: 1, quantity: 1 }])
  })

  it('throws PrinterWriteError when the printer does not take the bytes, and stops the render', async () => {
    const script = scriptedRenderer(3)
    script.releaseAll()
    const { job: print } = job(script.renderer, {
      write: async () => {
        throw new Error('connection reset')
      },
    })
    const error = await printPdf(print).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PrinterWriteError)
    expect((error as Error).message).toBe('connection reset')
    expect(script.state.finished).toBe(true)
  })
})

import { open, rm } from 'node:fs/promises'
import type { RasterEncoding, RasterOptions } from '../languages/raster-job.ts'
import type { MediaPlan } from '../render/media-plan.ts'
import { layOutPage } from '../render/page-layout.ts'
import type { Renderer } from '../render/render-worker.ts'
import { streamFile } from './stream-file.ts'

/** The printer did not take bytes: the job is `interrupted` (its bytes may have reached paper). */
export class PrinterWriteError extends Error {
  constructor(cause: unknown) {
    super((cause as Error)?.message ?? String(cause), { cause })
    this.name = 'PrinterWriteError'
  }
}

export interface PdfPrint {
  /** The downloaded PDF. */
  file: string
  plan: MediaPlan
  encoding: RasterEncoding
  copies: number
  renderer: Pick<Renderer, 'render'>
  deadlineMs: number
  /** Called once, right before the first byte goes to the printer; false: do not print (cancelled). */
  start(): boolean
  write(bytes: Buffer): Promise<void>
}

/**
 * Prints a PDF on a raster printer (docs/pdf-printing.md): renders it in the render worker, lays out and
 * dithers each page, and writes it in the printer's language at once, while Ghostscript renders the next; with
 * more than one copy a page waits for the next one (or the render's end: a one-page document takes the
 * printer's own quantity for its copies). Copies of a
 * longer document are collated: the first copy's bytes are kept in a file beside the document and sent
 * again for each further copy. Resolves the pages printed per copy, or null when start() said no.
 * Throws RenderError when the document cannot be rendered (before or after pages were printed) and
 * PrinterWriteError when the printer does not take the bytes.
 */
export async function printPdf(job: PdfPrint): Promise<number | null> {
  const options: RasterOptions = { copies: job.copies, dpi: job.plan.dpi }
  const pages = job.renderer
    .render(job.file, { dpi: job.plan.dpi, deadlineMs: job.deadlineMs })
    [Symbol.asyncIterator]()
  const replayFile = `${job.file}.copy`
  let replay: Awaited<ReturnType<typeof open>> | undefined
  let printed = 0
  try {
    let current = await pages.next()
    while (!current.done) {
      const next = pages.next()
      const bitmap = layOutPage(current.value, job.plan)
      // With one copy a page goes at once; with more, whether the document is one page decides how.
      const following = job.copies > 1 ? await next : undefined
      const only = printed === 0 && following?.done === true
      const bytes = job.encoding.page(bitmap, only ? job.copies : 1, options)
      if (printed === 0) {
        if (!job.start()) return null
        await send(job, job.encoding.prologue)
        if (!only && job.copies > 1) replay = await open(replayFile, 'w')
      }
      await send(job, bytes)
      await replay?.write(bytes)
      printed++
      current = following ?? (await next)
    }
    if (replay) {
      await replay.close()
      replay = undefined
      for (let copy = 1; copy < job.copies; copy++) await streamFile(replayFile, (chunk) => send(job, chunk))
    }
    return printed
  } finally {
    // Stops Ghostscript when printing ended early; a no-op once every page was taken.
    await pages.return?.()
    await replay?.close()
    await rm(replayFile, { force: true })
  }
}

async function send(job: PdfPrint, bytes: Buffer): Promise<void> {
  if (bytes.length === 0) return
  try {
    await job.write(bytes)
  } catch (error) {
    throw new PrinterWriteError(error)
  }
}

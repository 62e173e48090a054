import { open } from 'node:fs/promises'
import { resolve } from 'node:path'
import { RenderError } from './render-error.ts'

// How the hub runs Ghostscript on a document it did not write, the same policy as the cloud's inspection:
// - -dSAFER always: no file access beyond the input, the output files and Ghostscript's own resources, no
//   %pipe%, no device or parameter changes from the document.
// - The GS_* variables are removed from the worker's environment: GS_OPTIONS could add -dNOSAFER, GS_LIB
//   could replace the init files. libgs reads them when an instance starts, inside the worker.
// - -dPDFSTOPONERROR: stop at the first error rather than print whatever survives it.
// - Only PDFs reach Ghostscript (checked before): it would run any other file as a PostScript program.

/** The largest page side rendered, in millimetres. A longer page fails with `page_too_big`. */
export const MAX_PAGE_MM = 2000

/** The most dots a rendered page holds (one byte each in grey: 64 MB). A larger page fails with `page_too_big`. */
export const MAX_PAGE_DOTS = 64 * 1024 * 1024

/** The largest page side in dots at `dpi`: 2000 mm is 15,984 dots at 203 dpi, 23,622 at 300 dpi. */
export function maxPageDots(dpi: number): number {
  return Math.floor((MAX_PAGE_MM / 25.4) * dpi)
}

/** Resolutions a render may ask for. */
export const MIN_DPI = 72
export const MAX_DPI = 1200

/** The file name of page `n` (from 1) in a render's output directory. */
export function pageFileName(page: number): string {
  return `page-${page}.pgm`
}

/** The arguments every Ghostscript run of the hub starts with (argv[0] included, as ghostscript4js wants). */
export const GHOSTSCRIPT_BASE_ARGS: readonly string[] = [
  'gs',
  '-dSAFER',
  '-dBATCH', // exit when the file is done instead of waiting for PostScript on stdin
  '-dNOPAUSE', // no prompt between pages
  '-dNOPROMPT',
  '-dQUIET', // no banner or "Page n" lines; errors still go to stderr
  '-dPDFSTOPONERROR',
]

/** True when `args` start with GHOSTSCRIPT_BASE_ARGS (the render worker runs nothing else). */
export function followsPolicy(args: readonly string[]): boolean {
  return GHOSTSCRIPT_BASE_ARGS.every((arg, i) => args[i] === arg)
}

/** Ghostscript's arguments to render every page of a PDF into `outputDir`, one grey page file each. */
export function ghostscriptArgs(pdfPath: string, outputDir: string, dpi: number): string[] {
  return [
    ...GHOSTSCRIPT_BASE_ARGS,
    // pgmraw: binary PGM (P5), 8-bit grey, 0 = black; laid out and dithered by the hub (page-layout.ts)
    '-sDEVICE=pgmraw',
    // no anti-aliasing: text, lines and barcodes stay pure black and white
    '-dTextAlphaBits=1',
    '-dGraphicsAlphaBits=1',
    `-r${dpi}`,
    // one file per page; %d is the page number from 1. A page's file is complete once it holds the
    // header's width × height, before Ghostscript has finished the next page
    `-sOutputFile=${resolve(outputDir, 'page-%d.pgm')}`,
    '-f',
    resolve(pdfPath),
  ]
}

/** The worker's environment: the hub's, without Ghostscript's GS_* variables. */
export function ghostscriptEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('GS_')))
}

/**
 * Refuses a file that Ghostscript would not read as a PDF: `%PDF-` must start within the first 1024 bytes
 * (PDF Reference 1.7, Appendix H, note 13), and a file starting with `%!` runs as PostScript whatever follows.
 */
export async function assertPdf(pdfPath: string): Promise<void> {
  const file = await open(pdfPath, 'r')
  try {
    const head = Buffer.alloc(1024 + 5)
    const { bytesRead } = await file.read(head, 0, head.length, 0)
    const bytes = head.subarray(0, bytesRead)
    const at = bytes.indexOf('%PDF-', 0, 'latin1')
    if (at === -1 || bytes.toString('latin1', 0, 2) === '%!')
      throw new RenderError('not_a_pdf', 'The document is not a PDF.')
  } finally {
    await file.close()
  }
}

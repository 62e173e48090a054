import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * A PDF written by hand: one content stream per page and a correct cross-reference table. Nothing is drawn
 * with fonts, so Ghostscript renders it without looking anything up.
 */
export function handWrittenPdf(pageContents: string[]): Buffer {
  const pageCount = pageContents.length
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageContents.map((_, i) => `${3 + 2 * i} 0 R`).join(' ')}] /Count ${pageCount} >>`,
  ]
  for (const [i, content] of pageContents.entries()) {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents ${4 + 2 * i} 0 R >>`)
    objects.push(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`)
  }
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'
  const offsets: number[] = []
  for (const [i, body] of objects.entries()) {
    offsets.push(Buffer.byteLength(out, 'latin1'))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  }
  const xref = Buffer.byteLength(out, 'latin1')
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

/** A one-page PDF whose single path has `segments` × 2 line segments: slow to interpret (seconds). */
export function slowPdf(segments = 300_000): Buffer {
  return handWrittenPdf([`1 w 0 0 m ${'200 200 l 0 0 l '.repeat(segments)}S`])
}

/** Writes a PDF made by Ghostscript's pdfwrite from a tiny PostScript program; extra args e.g. passwords. */
export async function ghostscriptPdf(
  dir: string,
  name: string,
  pages: number,
  extra: string[] = [],
): Promise<string> {
  const ps = join(dir, `${name}.ps`)
  const pdf = join(dir, `${name}.pdf`)
  await writeFile(ps, `%!PS\n1 1 ${pages} { pop newpath 72 72 moveto 144 144 lineto stroke showpage } for\n`)
  await run('gs', [
    '-q',
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-sDEVICE=pdfwrite',
    ...extra,
    `-sOutputFile=${pdf}`,
    ps,
  ])
  return pdf
}

/**
 * A structurally sound PDF of the objects given (index = object id, from 1; ISO 32000-1 §7.5: header, objects,
 * xref table with exact byte offsets, trailer). Objects are written as Latin-1 text.
 */
export function pdfFromObjects(objects: string[]): Buffer {
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'
  const offsets: number[] = []
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(body, 'latin1')
    body += `${id} 0 obj\n${objects[id]}\nendobj\n`
  }
  const xrefAt = Buffer.byteLength(body, 'latin1')
  body += `xref\n0 ${objects.length}\n0000000000 65535 f \n`
  for (let id = 1; id < objects.length; id++) body += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`
  return Buffer.from(body, 'latin1')
}

/** A PDF literal string of printable ASCII: `\`, `(` and `)` escaped (ISO 32000-1 §7.3.4.2). */
export const pdfString = (ascii: string): string => `(${ascii.replace(/[\\()]/g, (c) => `\\${c}`)})`

/** A line of text on a page: its size in points and its baseline's distance from the page's top. */
export interface PdfLine {
  text: string
  size: number
  top: number
}

/**
 * One A4 page (595 × 842 pt) of Helvetica lines, 72 pt from the left edge. The text must be printable ASCII
 * (the standard font's encoding covers it without embedding a font).
 */
export function textPagePdf(lines: readonly PdfLine[]): Buffer {
  const content = lines
    .map((line) => `BT /F1 ${line.size} Tf 72 ${842 - line.top} Td ${pdfString(line.text)} Tj ET`)
    .join('\n')
  return pdfFromObjects([
    '',
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ])
}

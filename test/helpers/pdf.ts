/**
 * A structurally sound PDF of the objects given (index = object id, from 1; ISO 32000-1 §7.5: header, objects,
 * xref table with exact byte offsets, trailer).
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

/** Small PDFs for tests: each page shows one line of Helvetica text. */
export function makePdf(pageCount = 1, text = 'Hello from print-hub'): Buffer {
  const objects: string[] = []
  const pageIds = Array.from({ length: pageCount }, (_, i) => 4 + i * 2)
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>'
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageCount} >>`
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'
  pageIds.forEach((id, i) => {
    const stream = `BT /F1 18 Tf 40 100 Td (${text} ${i + 1}) Tj ET`
    objects[id] =
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 227 200] /Resources << /Font << /F1 3 0 R >> >> ' +
      `/Contents ${id + 1} 0 R >>`
    objects[id + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`
  })
  return pdfFromObjects(objects)
}

/** A content stream (or form XObject) object with its exact /Length. */
export function pdfStream(content: string, dictionary = ''): string {
  return `<< ${dictionary}/Length ${content.length} >>\nstream\n${content}\nendstream`
}

/** One page: its size in points (1/72 in), its content stream and its /Resources dictionary. */
export interface PageSpec {
  width: number
  height: number
  content: string
  resources?: string
}

/** The object id `pagesPdf` gives the first of its `extra` objects. */
export function firstExtraObjectId(pageCount: number): number {
  return 3 + 2 * pageCount
}

/**
 * A PDF of the pages given: catalog (1), pages (2), then each page and its content stream; `extra` objects
 * (fonts, forms) follow from firstExtraObjectId(pages.length).
 */
export function pagesPdf(pages: PageSpec[], extra: string[] = []): Buffer {
  const objects: string[] = []
  const pageIds = pages.map((_, i) => 3 + i * 2)
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>'
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`
  pages.forEach((page, i) => {
    const id = pageIds[i]!
    objects[id] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${page.width.toFixed(4)} ${page.height.toFixed(4)}] ` +
      `/Resources ${page.resources ?? '<< >>'} /Contents ${id + 1} 0 R >>`
    objects[id + 1] = pdfStream(page.content)
  })
  objects.push(...extra)
  return pdfFromObjects(objects)
}

import { pdfFromObjects } from '../../cloud/documents/pdf-writer.ts'

export { pdfFromObjects }

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

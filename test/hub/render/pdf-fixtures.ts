import { pdfFromObjects } from '../../helpers/pdf.ts'

/** PDFs for the render tests (built with test/helpers/pdf.ts). Sizes are in points (1/72 in). */
export const mm = (millimetres: number) => (millimetres / 25.4) * 72

function stream(content: string, dictionary = ''): string {
  return `<< ${dictionary}/Length ${content.length} >>\nstream\n${content}\nendstream`
}

export interface PageSpec {
  width: number
  height: number
  /** The page's content stream. */
  content: string
  /** The page's /Resources dictionary. */
  resources?: string
}

/** A PDF of the pages given; `extra` objects follow the pages (ids from 3 + 2 × pages.length). */
export function pagesPdf(pages: PageSpec[], extra: string[] = []): Buffer {
  const objects: string[] = []
  const pageIds = pages.map((_, i) => 3 + i * 2)
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>'
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`
  pages.forEach((page, i) => {
    const id = pageIds[i]!
    objects[id] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${page.width.toFixed(3)} ${page.height.toFixed(3)}] ` +
      `/Resources ${page.resources ?? '<< >>'} /Contents ${id + 1} 0 R >>`
    objects[id + 1] = stream(page.content)
  })
  objects.push(...extra)
  return pdfFromObjects(objects)
}

/**
 * A page whose content never ends in practice: form XObjects nested `levels` deep, each drawing the one
 * below it ten times, so the page paints 10^levels squares from a file of a few kilobytes.
 */
function endlessPage(firstObjectId: number, levels: number): { page: PageSpec; objects: string[] } {
  const objects: string[] = []
  for (let level = 0; level < levels; level++) {
    const content =
      level === 0
        ? '0 0 1 1 re f'
        : Array(10)
            .fill(`/X${level - 1} Do`)
            .join(' ')
    const resources =
      level === 0 ? '' : `/Resources << /XObject << /X${level - 1} ${firstObjectId + level - 1} 0 R >> >> `
    objects.push(stream(content, `/Type /XObject /Subtype /Form /BBox [0 0 100 100] ${resources}`))
  }
  const top = levels - 1
  return {
    page: {
      width: mm(58),
      height: mm(40),
      content: `/X${top} Do`,
      resources: `<< /XObject << /X${top} ${firstObjectId + top} 0 R >> >>`,
    },
    objects,
  }
}

/** `pages`, then a 58 mm × 40 mm page whose content never ends in practice (`endlessPage`). */
export function withEndlessPage(pages: PageSpec[], levels = 12): Buffer {
  // The pages and their content streams take ids 3 to 2 × (pages + 1) + 2; the forms follow.
  const endless = endlessPage(3 + 2 * (pages.length + 1), levels)
  return pagesPdf([...pages, endless.page], endless.objects)
}

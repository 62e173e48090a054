import { firstExtraObjectId, type PageSpec, pagesPdf, pdfStream as stream } from '../../helpers/pdf.ts'

export { type PageSpec, pagesPdf }

/** PDFs for the render tests (built with test/helpers/pdf.ts). Sizes are in points (1/72 in). */
export const mm = (millimetres: number) => (millimetres / 25.4) * 72

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
  const endless = endlessPage(firstExtraObjectId(pages.length + 1), levels)
  return pagesPdf([...pages, endless.page], endless.objects)
}

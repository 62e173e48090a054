/** Reading console pages in tests: the text people see, table rows, fact lists and sections. */

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
}

/** The text of an HTML fragment: each tag a space, the layout's entities decoded, spaces collapsed. */
export const textOf = (fragment: string): string =>
  fragment
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity)
    .replace(/\s+/g, ' ')
    .trim()

/** The text of each cell of each body row of the fragment's tables. */
export const tableRows = (fragment: string): string[][] =>
  [...fragment.matchAll(/<tbody>([\s\S]*?)<\/tbody>/g)].flatMap((body) =>
    [...(body[1] ?? '').matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
      [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) => textOf(cell[1] ?? '')),
    ),
  )

/** The `<dt>`/`<dd>` pairs of the fragment's fact lists, as text. */
export const facts = (fragment: string): Record<string, string> =>
  Object.fromEntries(
    [...fragment.matchAll(/<dt>([^<]*)<\/dt><dd[^>]*>([\s\S]*?)<\/dd>/g)].map((m) => [
      m[1],
      textOf(m[2] ?? ''),
    ]),
  )

/** The `<section>` whose heading (h2 or h3) has this text; throws when there is none. */
export function sectionOf(page: string, heading: string): string {
  for (const [section] of page.matchAll(/<section[\s\S]*?<\/section>/g)) {
    const title = /<h[23][^>]*>([\s\S]*?)<\/h[23]>/.exec(section)?.[1]
    if (title !== undefined && textOf(title) === heading) return section
  }
  throw new Error(`no section headed ${JSON.stringify(heading)}`)
}

/** The part of the page from the heading with this text to the next heading of that level (or the end). */
export function partUnder(page: string, heading: string): string {
  const headings = [...page.matchAll(/<h2[^>]*>([\s\S]*?)<\/h2>/g)]
  const index = headings.findIndex((h) => textOf(h[1] ?? '') === heading)
  const start = headings[index]
  if (!start || start.index === undefined) throw new Error(`no heading ${JSON.stringify(heading)}`)
  return page.slice(start.index, headings[index + 1]?.index ?? page.length)
}

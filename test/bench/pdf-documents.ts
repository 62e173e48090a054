import { firstExtraObjectId, pagesPdf } from '../helpers/pdf.ts'

// Realistic documents for the PDF rendering benchmark (pdf-render.ts): text in the standard Helvetica
// fonts, grey areas that the hub must dither, barcode-like bars. Sizes in PDF points (1/72 in), origin at
// the bottom left. Deterministic: the same bytes on every run.

const MM = 72 / 25.4

interface Page {
  width: number
  height: number
  content: string
}

/** The pages, each with the two fonts (F1 Helvetica, F2 Helvetica-Bold), which follow the pages. */
function documentPdf(pages: Page[]): Buffer {
  const fonts = firstExtraObjectId(pages.length)
  const resources = `<< /Font << /F1 ${fonts} 0 R /F2 ${fonts + 1} 0 R >> >>`
  return pagesPdf(
    pages.map((page) => ({ ...page, resources })),
    [
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>',
    ],
  )
}

const n = (x: number) => Number(x.toFixed(2))
const rect = (x: number, y: number, w: number, h: number) => `${n(x)} ${n(y)} ${n(w)} ${n(h)} re f`
/** A PDF string literal (the texts here hold no parentheses or backslashes; escaped anyway). */
const str = (s: string) => `(${s.replace(/[()\\]/g, (c) => `\\${c}`)})`
/** One line of text at (x, y); `font` F1 (regular) or F2 (bold). */
const text = (x: number, y: number, size: number, s: string, font = 'F1') =>
  `BT /${font} ${size} Tf ${n(x)} ${n(y)} Td ${str(s)} Tj ET`
/** Right-aligned at `right`, with Helvetica's average width: good enough for a benchmark. */
const textRight = (right: number, y: number, size: number, s: string, font = 'F1') =>
  text(right - s.length * size * 0.55, y, size, s, font)

/** Barcode-like bars: bar and gap widths in `unit` points, starting with a bar. */
function bars(x: number, y: number, height: number, widths: number[], unit: number): string {
  const parts: string[] = []
  let at = x
  widths.forEach((width, i) => {
    if (i % 2 === 0) parts.push(rect(at, y, width * unit, height))
    at += width * unit
  })
  return parts.join('\n')
}

/** A deterministic pseudo-random sequence (xorshift32) of integers from 0. */
function randoms(seed: number): () => number {
  let state = seed
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return state >>> 0
  }
}

/** A Code 128-like sequence of bar and gap widths (1 to 4 units), `count` elements. */
function barWidths(count: number, seed: number): number[] {
  const next = randoms(seed)
  return Array.from({ length: count }, () => 1 + (next() % 4))
}

/** The receipt's size: an 80 mm roll, 150 mm long. */
export const RECEIPT_WIDTH_MM = 80
export const RECEIPT_HEIGHT_MM = 150

/**
 * A one-page till receipt 80 × 150 mm: a logo of grey tones (dithered by the hub), the shop's name and
 * address, twelve item lines with amounts, totals, VAT, a footer and a barcode.
 */
export function benchReceiptPdf(): Buffer {
  const width = RECEIPT_WIDTH_MM * MM
  const height = RECEIPT_HEIGHT_MM * MM
  const left = 14
  const right = width - 14
  const parts: string[] = []
  // logo: a grey block with a darker inner block and a strip of four tones
  parts.push('0.75 g', rect(left, height - 62, 60, 48), '0.35 g', rect(left + 10, height - 52, 40, 28))
  parts.push(
    ...[0.2, 0.45, 0.65, 0.85].flatMap((grey, i) => [
      `${grey} g`,
      rect(left + 66 + i * 12, height - 62, 10, 48),
    ]),
  )
  parts.push('0 g')
  parts.push(text(left + 120, height - 30, 13, 'CAFE NORD', 'F2'))
  parts.push(text(left + 120, height - 42, 7, '12 Harbour Street'))
  parts.push(text(left + 120, height - 51, 7, 'Tel. 01632 960 123'))
  let y = height - 82
  parts.push(text(left, y, 8, 'Till 3   Receipt 000482   14:32'), rect(left, y - 6, right - left, 0.8))
  const items: [string, string][] = [
    ['2 x Flat white', '7.00'],
    ['1 x Cappuccino large', '3.90'],
    ['1 x Almond croissant', '3.20'],
    ['3 x Cinnamon bun', '8.85'],
    ['1 x Sourdough loaf', '4.50'],
    ['2 x Orange juice', '5.60'],
    ['1 x Avocado toast', '8.90'],
    ['1 x Oat milk supplement', '0.40'],
    ['1 x Granola bowl', '6.20'],
    ['2 x Espresso', '4.40'],
    ['1 x Chocolate brownie', '2.95'],
    ['1 x Sparkling water', '2.10'],
  ]
  y -= 20
  for (const [item, amount] of items) {
    parts.push(text(left, y, 8.5, item), textRight(right, y, 8.5, amount))
    y -= 12
  }
  parts.push(rect(left, y + 4, right - left, 1.5))
  y -= 12
  parts.push(text(left, y, 12, 'TOTAL', 'F2'), textRight(right, y, 12, 'EUR 58.00', 'F2'))
  y -= 16
  parts.push(text(left, y, 7.5, 'of which VAT 20%'), textRight(right, y, 7.5, '9.67'))
  y -= 10
  parts.push(text(left, y, 7.5, 'Card **** 4821  contactless'), textRight(right, y, 7.5, '58.00'))
  y -= 18
  parts.push(text(left + 40, y, 8, 'Thank you for your visit!', 'F2'))
  parts.push(bars(left + 20, 22, 34, barWidths(61, 7), 1))
  parts.push(text(left + 40, 12, 6.5, '4 006381 333931 000482'))
  return documentPdf([{ width, height, content: parts.join('\n') }])
}

/** A 4 × 6 in shipping label page: 288 × 432 pt. */
export const LABEL_WIDTH_PT = 288
export const LABEL_HEIGHT_PT = 432

/**
 * A one-page 4 × 6 in shipping label: frame and dividing rules, sender and recipient addresses, a large
 * routing code on a black band, a 2D-code-like grid of squares, a tracking barcode and its number.
 */
export function benchLabelPdf(): Buffer {
  const w = LABEL_WIDTH_PT
  const h = LABEL_HEIGHT_PT
  const parts: string[] = ['0 g']
  // frame (even-odd) and rules
  parts.push(`6 6 ${w - 12} ${h - 12} re 9 9 ${w - 18} ${h - 18} re f*`)
  parts.push(rect(9, 350, w - 18, 2), rect(9, 230, w - 18, 2), rect(9, 120, w - 18, 2))
  // sender
  parts.push(text(16, 410, 7, 'FROM', 'F2'))
  parts.push(
    ...['Nordic Parts Ltd', 'Unit 4, Riverside Park', 'Leeds LS10 1AB', 'United Kingdom'].map((line, i) =>
      text(16, 398 - i * 10, 8, line),
    ),
  )
  // service box on the right
  parts.push(
    rect(190, 362, 86, 56),
    '1 g',
    text(200, 392, 20, 'P2', 'F2'),
    text(200, 372, 8, 'PRIORITY', 'F2'),
  )
  parts.push('0 g')
  // recipient
  parts.push(text(16, 334, 8, 'SHIP TO', 'F2'))
  const recipient = [
    'Ms Jane Example',
    'Logistics Dept., Gate 7',
    '45 Industrial Avenue',
    'Rotterdam 3011 AA',
    'NETHERLANDS',
  ]
  parts.push(...recipient.map((line, i) => text(16, 316 - i * 15, 12, line, i === 0 ? 'F2' : 'F1')))
  // routing code on a black band, and a 2D-code-like grid
  parts.push(rect(16, 180, 150, 40), '1 g', text(24, 190, 26, 'NL 3011', 'F2'), '0 g')
  const next = randoms(42)
  for (let row = 0; row < 16; row++)
    for (let col = 0; col < 16; col++)
      if (next() % 2 || row < 2 || col < 2) parts.push(rect(186 + col * 5.5, 136 + row * 5.5, 5.5, 5.5))
  parts.push(text(16, 160, 8, 'Weight 2.4 kg   Parcel 1 of 1'))
  parts.push(text(16, 146, 8, 'Ref. PO-77812 / 2024-11-05'))
  // tracking barcode and its number
  parts.push(bars(34, 40, 70, barWidths(81, 3), 1))
  parts.push(text(60, 24, 10, '1Z 999 AA1 01 2345 6784', 'F2'))
  return documentPdf([{ width: w, height: h, content: parts.join('\n') }])
}

const WORDS =
  'the invoice lists every item shipped under the order together with quantities unit prices discounts and taxes payment is due within thirty days of the invoice date late payment incurs interest at the statutory rate goods remain our property until paid in full please quote the reference number on all correspondence'.split(
    ' ',
  )

/**
 * An A4 document of `pages` text-heavy pages (595 × 842 pt): a bold heading, then 72 lines of 9 pt
 * Helvetica per page, a table rule every 12 lines and a page number.
 */
export function benchA4Pdf(pages = 10): Buffer {
  const width = 595.28
  const height = 841.89
  let word = 0
  const line = () => {
    let s = ''
    while (s.length < 100) s += `${WORDS[word++ % WORDS.length]} `
    return s.trim()
  }
  return documentPdf(
    Array.from({ length: pages }, (_, p) => {
      const parts = ['0 g', text(56, 790, 16, `Statement of account, page ${p + 1}`, 'F2')]
      for (let i = 0; i < 72; i++) {
        const y = 760 - i * 9.6
        parts.push(text(56, y, 9, line()))
        if (i % 12 === 11) parts.push(rect(56, y - 3, width - 112, 0.6))
      }
      parts.push(text(width / 2 - 20, 30, 8, `Page ${p + 1} of ${pages}`))
      return { width, height, content: parts.join('\n') }
    }),
  )
}

import type { DocumentFormat, RawLanguage } from '../../protocol/enums.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'
import { slipText, textSlip } from '../../protocol/text-slip.ts'
import { textPagePdf } from '../documents/pdf-writer.ts'
import { timeWords } from './job-view.ts'

/** The document of a printer's test page, as the API would take it. */
export interface TestPage {
  bytes: Buffer
  format: DocumentFormat
  rawLanguage: RawLanguage | null
  filename: string
}

/** The longest printer name a slip shows (its title line fits a 2-inch label and a 58 mm roll). */
const NAME_CHARACTERS = 23

/**
 * A test page for the printer: a short slip in its first raw language (the hub's pairing slip layout: who,
 * TEST PAGE at double size, when), or a one-page PDF where it takes PDF and no raw language. Undefined where
 * it takes neither.
 */
export function testPageFor(
  printer: { name: string; capabilities: PrinterCapabilities },
  at: Date,
): TestPage | undefined {
  const { document_formats: formats, raw_languages: languages } = printer.capabilities
  const name = slipText(printer.name).slice(0, NAME_CHARACTERS)
  const sent = `Sent ${timeWords(at.toISOString())}`
  const language = formats.includes('raw') ? languages[0] : undefined
  if (language) {
    const slip = textSlip(language, { title: `Printer: ${name}`, emphasis: 'TEST PAGE', note: sent })
    return { bytes: Buffer.from(slip), format: 'raw', rawLanguage: language, filename: 'test-page' }
  }
  if (!formats.includes('pdf')) return undefined
  const pdf = textPagePdf([
    { text: 'Print Hub test page', size: 24, top: 120 },
    { text: `Printer: ${slipText(printer.name)}`, size: 14, top: 160 },
    { text: sent, size: 12, top: 185 },
  ])
  return { bytes: pdf, format: 'pdf', rawLanguage: null, filename: 'test-page.pdf' }
}

import type { DocumentFormat, RawLanguage } from '../../protocol/enums.ts'
import { ApiError } from '../api-error.ts'

export type SniffResult =
  | { kind: 'pdf' }
  | { kind: 'raw'; guessedLanguage: RawLanguage | null }
  | { kind: 'unsupported'; mime: string }

export interface ResolvedDocumentType {
  format: DocumentFormat
  rawLanguage: RawLanguage | null
  mimeType: string
}

/**
 * MIME types of RAW payloads. None is IANA-registered; these are the service's own names, in the vendor tree
 * after the maker of each language, and are what `document_mime_type` reports.
 */
export const RAW_MIME_TYPES: Record<RawLanguage, string> = {
  zpl: 'application/vnd.zebra-zpl',
  tspl: 'application/vnd.tsc-tspl',
  cpcl: 'application/vnd.zebra-cpcl',
  escpos: 'application/vnd.epson-escpos',
}

/**
 * Where `%PDF-` starts, or -1. Like Acrobat, the header may sit anywhere in the first 1024 bytes (PDF
 * Reference 1.7, Appendix H, implementation note 13); Ghostscript accepts the same.
 */
export function pdfHeaderOffset(bytes: Buffer): number {
  const at = bytes.subarray(0, 1024 + 5).indexOf('%PDF-', 0, 'latin1')
  return at !== -1 && at <= 1024 ? at : -1
}

const ascii = (bytes: Buffer, from: number, to: number) => bytes.toString('latin1', from, to)
const starts = (bytes: Buffer, hex: string) =>
  bytes.subarray(0, hex.length / 2).equals(Buffer.from(hex, 'hex'))

function zipType(bytes: Buffer): string {
  const head = ascii(bytes, 0, 4096)
  if (head.includes('word/')) return 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
  if (head.includes('xl/')) return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
  if (head.includes('ppt/'))
    return 'application/vnd.openxmlformats-officedocument.presentationml.presentation'
  const odf = /mimetype(application\/vnd\.oasis\.opendocument\.[a-z-]+)/.exec(head)
  return odf?.[1] ?? 'application/zip'
}

/** Types recognised by their first bytes that are neither PDF nor printer languages. */
function unsupportedType(bytes: Buffer): string | null {
  if (starts(bytes, '89504e470d0a1a0a')) return 'image/png'
  if (starts(bytes, 'ffd8ff')) return 'image/jpeg'
  if (/^GIF8[79]a/.test(ascii(bytes, 0, 6))) return 'image/gif'
  if (starts(bytes, '49492a00') || starts(bytes, '4d4d002a')) return 'image/tiff'
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp'
  if (ascii(bytes, 4, 8) === 'ftyp')
    return /^(heic|heix|mif1|msf1|avif)/.test(ascii(bytes, 8, 12)) ? 'image/heif' : 'video/mp4'
  // BMP only with a consistent header: "BM", file size = length, reserved words zero (TSPL lines start "B...")
  if (
    ascii(bytes, 0, 2) === 'BM' &&
    bytes.length >= 14 &&
    bytes.readUInt32LE(2) === bytes.length &&
    bytes.readUInt32LE(6) === 0
  ) {
    return 'image/bmp'
  }
  if (starts(bytes, '504b0304')) return zipType(bytes)
  if (starts(bytes, 'd0cf11e0a1b11ae1')) return 'application/x-ole-storage'
  if (starts(bytes, '1f8b08')) return 'application/gzip'
  if (starts(bytes, '377abcaf271c') || ascii(bytes, 0, 4) === 'Rar!') return 'application/octet-stream'
  // PostScript, including a PDF header further on: Ghostscript runs a file that starts with %! as PostScript
  if (ascii(bytes, 0, 2) === '%!' || starts(bytes, 'c5d0d3c6')) return 'application/postscript'
  if (ascii(bytes, 0, 9) === '\x1b%-12345X') return 'application/vnd.hp-pjl'
  if (ascii(bytes, 0, 5) === '{\\rtf') return 'application/rtf'
  const text = ascii(bytes, 0, 512)
    .replace(/^\ufeff|^\xef\xbb\xbf/, '')
    .trimStart()
    .toLowerCase()
  if (/^<(!doctype html|html|head|body)\b/.test(text)) return 'text/html'
  if (text.startsWith('<svg') || (text.startsWith('<?xml') && text.includes('<svg'))) return 'image/svg+xml'
  if (text.startsWith('<?xml')) return 'application/xml'
  return null
}

const TSPL_LINE = /^[ \t]*(SIZE[ \t]+[\d.]+|GAP[ \t]+[\d.]+|CLS[ \t]*$)/im
const CPCL_HEADER = /^\s*![ \t]+\d+[ \t]+\d+[ \t]+\d+[ \t]+\d+[ \t]+\d+/

/** Strong evidence for a language: what a payload of that language is built around. */
function strongEvidence(bytes: Buffer, head: string): RawLanguage | null {
  if (CPCL_HEADER.test(head) || /^\s*![ \t]*UTILITIES\b/i.test(head)) return 'cpcl'
  if (/\^XA/i.test(head) && /\^XZ/i.test(ascii(bytes, Math.max(0, bytes.length - 4096), bytes.length)))
    return 'zpl'
  if (TSPL_LINE.test(head)) return 'tspl'
  if (starts(bytes, '1b40') || head.includes('\x1dv0') || head.includes('\x1dV')) return 'escpos'
  return null
}

/** ESC, FS or GS bytes followed by a printable command letter, in the first 4 KiB. */
function commandIntroducers(bytes: Buffer): number {
  let count = 0
  const end = Math.min(bytes.length - 1, 4096)
  for (let i = 0; i < end; i++) {
    const c = bytes[i]
    const next = bytes[i + 1] ?? 0
    if ((c === 0x1b || c === 0x1c || c === 0x1d) && next >= 0x20 && next <= 0x7e) count++
  }
  return count
}

/** Whether the bytes hold anything at all of `language`: a ZPL prefix command, an ESC/GS byte, ... */
function someEvidence(bytes: Buffer, head: string, language: RawLanguage): boolean {
  switch (language) {
    case 'zpl':
      return /[\^~][A-Za-z0-9@]{2}/.test(head)
    case 'escpos':
      return commandIntroducers(bytes) > 0
    case 'cpcl':
      return /^\s*!/m.test(head)
    case 'tspl':
      // TSPL-only keywords, or a drawing command with TSPL's comma-separated parameters (CPCL uses spaces)
      return (
        /^[ \t]*(SIZE|GAP|BLINE|CLS|BITMAP|DIRECTION|DENSITY|SPEED|REFERENCE|CODEPAGE|DOWNLOAD|SET)\b/im.test(
          head,
        ) || /^[ \t]*(TEXT|BARCODE|BOX|BAR|QRCODE|PRINT)[ \t]+\d+[ \t]*,/im.test(head)
      )
  }
}

/** A best-effort guess of the printer language of a payload that is not a PDF, or null. */
export function guessRawLanguage(bytes: Buffer): RawLanguage | null {
  const head = ascii(bytes, 0, 4096)
  const strong = strongEvidence(bytes, head)
  if (strong) return strong
  if (/\^XA/i.test(head)) return 'zpl'
  if (commandIntroducers(bytes) >= 2) return 'escpos'
  return null
}

/** What the bytes are: a PDF, a recognisably unsupported type (with its MIME type), or presumably RAW. */
export function sniffDocument(bytes: Buffer): SniffResult {
  const unsupported = unsupportedType(bytes)
  if (unsupported) return { kind: 'unsupported', mime: unsupported }
  if (pdfHeaderOffset(bytes) !== -1) return { kind: 'pdf' }
  return { kind: 'raw', guessedLanguage: guessRawLanguage(bytes) }
}

function mismatch(message: string, details: Record<string, unknown>): ApiError {
  return new ApiError('document_format_mismatch', message, details)
}

/**
 * The format, raw language and MIME type of an uploaded document, from its bytes and what the client
 * declared. PDFs are recognised by their bytes; RAW must be declared with its language (a language alone
 * implies format raw). Throws 415 `unsupported_document_type` for other types, 422
 * `document_format_mismatch` when the bytes clearly contradict the declaration, and 422 `validation_failed`
 * for a raw language declared with format pdf.
 */
export function resolveDocumentType(
  bytes: Buffer,
  declared: { format?: DocumentFormat | null; rawLanguage?: RawLanguage | null },
): ResolvedDocumentType {
  const rawLanguage = declared.rawLanguage ?? null
  if (declared.format === 'pdf' && rawLanguage) {
    throw new ApiError('validation_failed', 'document_raw_language applies only to document_format raw.', {
      fields: [
        {
          field: 'document_raw_language',
          message: 'must be null when document_format is pdf',
          location: 'body',
        },
      ],
    })
  }
  const format = declared.format ?? (rawLanguage ? 'raw' : null)
  const sniffed = sniffDocument(bytes)
  if (sniffed.kind === 'unsupported') {
    throw new ApiError(
      'unsupported_document_type',
      `Documents of type ${sniffed.mime} are not printed; send a PDF, or a RAW payload with its language.`,
      { detected_mime_type: sniffed.mime },
    )
  }
  if (sniffed.kind === 'pdf') {
    if (format === 'raw') {
      throw mismatch('The document is a PDF but was declared as RAW.', {
        declared_format: 'raw',
        detected_format: 'pdf',
      })
    }
    return { format: 'pdf', rawLanguage: null, mimeType: 'application/pdf' }
  }
  if (format === 'pdf') {
    throw mismatch('The document was declared as a PDF but is not one.', { declared_format: 'pdf' })
  }
  if (!rawLanguage) {
    throw new ApiError(
      'unsupported_document_type',
      'The document is not a PDF. RAW printer data needs document_format=raw and document_raw_language.',
      { detected_raw_language: sniffed.guessedLanguage },
    )
  }
  const head = ascii(bytes, 0, 4096)
  const evident = strongEvidence(bytes, head)
  if (evident && evident !== rawLanguage && !someEvidence(bytes, head, rawLanguage)) {
    throw mismatch(`The document was declared as ${rawLanguage} but its bytes are ${evident}.`, {
      declared_raw_language: rawLanguage,
      detected_raw_language: evident,
    })
  }
  return { format: 'raw', rawLanguage, mimeType: RAW_MIME_TYPES[rawLanguage] }
}

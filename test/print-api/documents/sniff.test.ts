import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../print-api/api-error.ts'
import { pdfHeaderOffset, resolveDocumentType, sniffDocument } from '../../../print-api/documents/sniff.ts'
import type { DocumentFormat, RawLanguage } from '../../../protocol/enums.ts'
import { handWrittenPdf } from './pdf-fixtures.ts'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
const latin1 = (text: string) => Buffer.from(text, 'latin1')

const PDF = handWrittenPdf(['0 0 m 10 10 l S'])
const ZPL = latin1('^XA\r\n^FO50,50^A0N,40,40^FDHello^FS\r\n^BCN,80^FD12345^FS\r\n^XZ\r\n')
const TSPL = latin1(
  'SIZE 60 mm, 40 mm\r\nGAP 2 mm, 0 mm\r\nCLS\r\nTEXT 10,10,"3",0,1,1,"Hello"\r\nPRINT 1\r\n',
)
const CPCL = latin1('! 0 200 200 210 1\r\nTEXT 4 0 30 40 Hello\r\nFORM\r\nPRINT\r\n')
const ESCPOS = Buffer.concat([hex('1b40'), latin1('Total 12.00\n'), hex('1d5641 03')])

describe('sniffDocument', () => {
  it.each([
    ['a PDF', PDF, { kind: 'pdf' }],
    ['a PDF after 1000 bytes of garbage', Buffer.concat([Buffer.alloc(1000, 0x20), PDF]), { kind: 'pdf' }],
    ['PNG', hex('89504e470d0a1a0a 0000000d49484452'), { kind: 'unsupported', mime: 'image/png' }],
    ['JPEG', hex('ffd8ffe000104a464946'), { kind: 'unsupported', mime: 'image/jpeg' }],
    ['GIF', latin1('GIF89a\x01\x00\x01\x00'), { kind: 'unsupported', mime: 'image/gif' }],
    ['ZIP', hex('504b0304 14000000'), { kind: 'unsupported', mime: 'application/zip' }],
    [
      'DOCX',
      Buffer.concat([hex('504b0304 14000000'), latin1('....word/document.xml')]),
      {
        kind: 'unsupported',
        mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      },
    ],
    ['HTML', latin1('\n  <!DOCTYPE html><html><body>x'), { kind: 'unsupported', mime: 'text/html' }],
    [
      'PostScript',
      latin1('%!PS-Adobe-3.0\n%PDF-1.4 inside a comment\n'),
      { kind: 'unsupported', mime: 'application/postscript' },
    ],
    [
      'PJL',
      latin1('\x1b%-12345X@PJL ENTER LANGUAGE=PDF\r\n'),
      { kind: 'unsupported', mime: 'application/vnd.hp-pjl' },
    ],
    ['ZPL', ZPL, { kind: 'raw', guessedLanguage: 'zpl' }],
    ['TSPL', TSPL, { kind: 'raw', guessedLanguage: 'tspl' }],
    ['CPCL', CPCL, { kind: 'raw', guessedLanguage: 'cpcl' }],
    ['ESC/POS', ESCPOS, { kind: 'raw', guessedLanguage: 'escpos' }],
    ['plain text', latin1('just some words\n'), { kind: 'raw', guessedLanguage: null }],
  ])('%s', (_, bytes, expected) => {
    expect(sniffDocument(bytes)).toEqual(expected)
  })

  it('looks for %PDF- in the first 1024 bytes only', () => {
    expect(pdfHeaderOffset(Buffer.concat([Buffer.alloc(1024, 0x20), PDF]))).toBe(1024)
    expect(pdfHeaderOffset(Buffer.concat([Buffer.alloc(1025, 0x20), PDF]))).toBe(-1)
  })
})

type Declared = { format?: DocumentFormat | null; rawLanguage?: RawLanguage | null }
type Expected =
  | { format: DocumentFormat; rawLanguage: RawLanguage | null; mimeType: string }
  | [number, string]

const table: [string, Buffer, Declared, Expected][] = [
  ['PDF, nothing declared', PDF, {}, { format: 'pdf', rawLanguage: null, mimeType: 'application/pdf' }],
  [
    'PDF, declared pdf',
    PDF,
    { format: 'pdf' },
    { format: 'pdf', rawLanguage: null, mimeType: 'application/pdf' },
  ],
  ['PDF, declared raw', PDF, { format: 'raw', rawLanguage: 'zpl' }, [422, 'document_format_mismatch']],
  ['PDF, declared only a raw language', PDF, { rawLanguage: 'zpl' }, [422, 'document_format_mismatch']],
  ['ZPL, declared pdf', ZPL, { format: 'pdf' }, [422, 'document_format_mismatch']],
  ['raw language with format pdf', PDF, { format: 'pdf', rawLanguage: 'zpl' }, [422, 'validation_failed']],
  ['PNG, nothing declared', hex('89504e470d0a1a0a00'), {}, [415, 'unsupported_document_type']],
  [
    'PNG, declared raw',
    hex('89504e470d0a1a0a00'),
    { format: 'raw', rawLanguage: 'escpos' },
    [415, 'unsupported_document_type'],
  ],
  [
    'PostScript, declared pdf',
    latin1('%!PS\nshowpage\n'),
    { format: 'pdf' },
    [415, 'unsupported_document_type'],
  ],
  ['ZPL, nothing declared', ZPL, {}, [415, 'unsupported_document_type']],
  ['ZPL, declared raw without a language', ZPL, { format: 'raw' }, [415, 'unsupported_document_type']],
  [
    'ZPL as zpl',
    ZPL,
    { format: 'raw', rawLanguage: 'zpl' },
    { format: 'raw', rawLanguage: 'zpl', mimeType: 'application/vnd.zebra-zpl' },
  ],
  [
    'language alone implies raw',
    ZPL,
    { rawLanguage: 'zpl' },
    { format: 'raw', rawLanguage: 'zpl', mimeType: 'application/vnd.zebra-zpl' },
  ],
  [
    'TSPL as tspl',
    TSPL,
    { rawLanguage: 'tspl' },
    { format: 'raw', rawLanguage: 'tspl', mimeType: 'application/vnd.tsc-tspl' },
  ],
  [
    'CPCL as cpcl',
    CPCL,
    { format: 'raw', rawLanguage: 'cpcl' },
    { format: 'raw', rawLanguage: 'cpcl', mimeType: 'application/vnd.zebra-cpcl' },
  ],
  [
    'ESC/POS as escpos',
    ESCPOS,
    { format: 'raw', rawLanguage: 'escpos' },
    { format: 'raw', rawLanguage: 'escpos', mimeType: 'application/vnd.epson-escpos' },
  ],
  [
    'plain text as escpos',
    latin1('Hello\n'),
    { rawLanguage: 'escpos' },
    { format: 'raw', rawLanguage: 'escpos', mimeType: 'application/vnd.epson-escpos' },
  ],
  ['ESC/POS declared zpl', ESCPOS, { rawLanguage: 'zpl' }, [422, 'document_format_mismatch']],
  ['ZPL declared escpos', ZPL, { rawLanguage: 'escpos' }, [422, 'document_format_mismatch']],
  ['TSPL declared cpcl', TSPL, { rawLanguage: 'cpcl' }, [422, 'document_format_mismatch']],
  ['CPCL declared tspl', CPCL, { rawLanguage: 'tspl' }, [422, 'document_format_mismatch']],
  // Conservative: ZPL with an ESC/POS initialise in front is not a clear contradiction of escpos
  [
    'ESC @ then ZPL, declared zpl',
    Buffer.concat([hex('1b40'), ZPL]),
    { rawLanguage: 'zpl' },
    { format: 'raw', rawLanguage: 'zpl', mimeType: 'application/vnd.zebra-zpl' },
  ],
  [
    'TSPL text naming ^XA, declared tspl',
    latin1('SIZE 4,2\r\nCLS\r\nTEXT 1,1,"3",0,1,1,"^XA"\r\nPRINT 1\r\n'),
    { rawLanguage: 'tspl' },
    { format: 'raw', rawLanguage: 'tspl', mimeType: 'application/vnd.tsc-tspl' },
  ],
]

function outcome(bytes: Buffer, declared: Declared): Expected {
  try {
    return resolveDocumentType(bytes, declared)
  } catch (error) {
    if (error instanceof ApiError) return [error.status, error.code]
    throw error
  }
}

describe('resolveDocumentType', () => {
  it.each(table)('%s', (_, bytes, declared, expected) => {
    expect(outcome(bytes, declared)).toEqual(expected)
  })

  it('tells a client without a declaration how to send RAW', () => {
    expect(() => resolveDocumentType(ZPL, {})).toThrow(/document_format=raw and document_raw_language/)
  })

  it('names the detected type of an unsupported document', () => {
    try {
      resolveDocumentType(hex('ffd8ffe0'), { format: 'pdf' })
      expect.unreachable()
    } catch (error) {
      expect((error as ApiError).details).toEqual({ detected_mime_type: 'image/jpeg' })
    }
  })
})

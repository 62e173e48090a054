import { describe, expect, it } from 'vitest'
import { IppError, ippDocumentFormat, ippErrorHealth } from '../../../hub/ipp/ipp-printer.ts'
import { ippPrinterHealth } from '../../../hub/ipp/printer-health.ts'
import { BASIC_RASTER_PRINTER, describedPrinter, NOW, OFFICE_PRINTER } from './printer-attributes.ts'

describe('describing a printer from its attributes', () => {
  it('reads an office printer', () => {
    const printer = describedPrinter(OFFICE_PRINTER)
    expect(printer.capabilities).toEqual({
      document_formats: ['pdf'],
      raw_languages: [],
      dpi: [300, 600],
      default_dpi: 600,
      // the custom range 3 × 5 in to 8.5 × 14 in is the widest
      media_width_mm: { min: 76.2, max: 215.9 },
      media_height_mm: { min: 127, max: 355.6 },
      default_media: { width_mm: 210, height_mm: 297 },
      color: true,
      duplex: true,
    })
    expect(printer).toMatchObject({
      name: 'Front office',
      makeAndModel: 'Example Printer',
      takesPdf: true,
      takesPwgRaster: true,
      pwgRasterResolutions: [300, 600],
      pwgRasterTypes: ['black_1', 'sgray_8', 'srgb_8'],
      health: { state: 'ready', reasons: [], checked_at: NOW.toISOString() },
    })
    expect(printer.jobTemplate).toMatchObject({
      copies: { min: 1, max: 99 },
      orientations: [3, 4, 5, 6],
      printScalings: ['auto', 'auto-fit', 'fill', 'fit', 'none'],
    })
    expect(ippDocumentFormat(printer)).toBe('application/pdf')
  })

  it('reads a printer that takes PWG raster only', () => {
    const printer = describedPrinter(BASIC_RASTER_PRINTER)
    expect(printer.capabilities).toEqual({
      document_formats: ['pdf'],
      raw_languages: [],
      dpi: [300, 600],
      // the hub renders at the best PWG raster resolution
      default_dpi: 600,
      media_width_mm: { min: 210, max: 215.9 },
      media_height_mm: { min: 279.4, max: 297 },
      default_media: { width_mm: 215.9, height_mm: 279.4 },
      color: false,
      duplex: false,
    })
    expect(printer.name).toBe('basic')
    expect(printer.jobTemplate.copies).toBeNull()
    expect(ippDocumentFormat(printer)).toBe('image/pwg-raster')
  })

  it('takes no format from a printer that takes neither PDF nor PWG raster', () => {
    const printer = describedPrinter(OFFICE_PRINTER, {
      'document-format-supported': 'application/postscript',
    })
    expect(printer.capabilities.document_formats).toEqual([])
    expect(ippDocumentFormat(printer)).toBeNull()
  })

  it('accepts any media on a printer that states no sizes', () => {
    const printer = describedPrinter(BASIC_RASTER_PRINTER, {
      'media-supported': undefined,
      'media-default': undefined,
    })
    expect(printer.capabilities.media_width_mm).toEqual({ min: 1, max: 2000 })
    expect(printer.capabilities.default_media).toBeNull()
  })

  it('reads colour from print-color-mode-supported when color-supported is absent', () => {
    const printer = describedPrinter(BASIC_RASTER_PRINTER, {
      'color-supported': undefined,
      'print-color-mode-supported': ['monochrome', 'color'],
    })
    expect(printer.capabilities.color).toBe(true)
  })

  it('keeps only resolutions the same both ways, converting dots per centimetre', () => {
    const printer = describedPrinter(BASIC_RASTER_PRINTER, {
      'printer-resolution-supported': [
        [600, 1200, 'dpi'],
        [118, 118, 'dpcm'],
      ],
    })
    expect(printer.capabilities.dpi).toEqual([300, 600])
  })

  it('reads text with a language and falls back to printer-name', () => {
    expect(describedPrinter(OFFICE_PRINTER, { 'printer-info': 'en\u001eReception' }).name).toBe('Reception')
    expect(describedPrinter(OFFICE_PRINTER, { 'printer-info': '' }).name).toBe('front-office')
  })
})

describe('printer health', () => {
  const health = (state: string | null, reasons: string[]) => ippPrinterHealth(state, reasons, NOW)

  it.each([
    ['idle', ['none'], 'ready'],
    ['idle', ['media-low-warning'], 'paper_low'],
    ['processing', ['none'], 'busy'],
    ['stopped', ['media-empty-error'], 'paper_out'],
    ['stopped', ['media-needed-error'], 'paper_out'],
    ['stopped', ['cover-open-error'], 'cover_open'],
    ['stopped', ['door-open'], 'cover_open'],
    ['stopped', ['media-jam-error'], 'paper_jam'],
    ['stopped', ['paused'], 'paused'],
    ['stopped', ['toner-empty-error'], 'error'],
    ['stopped', ['none'], 'error'],
    ['stopped', ['media-empty-error', 'cover-open-error'], 'cover_open'],
    [null, [], 'unknown'],
  ])('printer-state %s with %j is %s', (state, reasons, expected) => {
    expect(health(state, reasons).state).toBe(expected)
  })

  it('reports the reasons less "none", at most 16', () => {
    expect(health('stopped', ['none', 'media-empty-error']).reasons).toEqual(['media-empty-error'])
    const many = Array.from({ length: 40 }, (_, i) => `vendor-reason-${i}-report`)
    expect(health('idle', many).reasons).toHaveLength(16)
  })

  it.each([
    [new IppError('unreachable', 'refused'), 'offline', 'transport_unreachable'],
    [new IppError('timeout', 'slow'), 'offline', 'transport_timeout'],
    [new IppError('tls', 'bad certificate'), 'error', 'ipp_tls_failed'],
    [new IppError('http', 'HTTP 401', { httpStatus: 401 }), 'error', 'ipp_http_401'],
    [
      new IppError('ipp_status', 'not found', { ippStatus: 'client-error-not-found' }),
      'error',
      'ipp_client-error-not-found',
    ],
    [new IppError('malformed', 'garbage'), 'error', 'ipp_malformed_reply'],
  ])('a query that failed with %s is %s', (error, state, reason) => {
    expect(ippErrorHealth(error, NOW)).toEqual({ state, reasons: [reason], checked_at: NOW.toISOString() })
  })
})

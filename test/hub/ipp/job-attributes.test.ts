import { describe, expect, it } from 'vitest'
import { ippJobAttributes } from '../../../hub/ipp/ipp-printer.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../../protocol/print-job.ts'
import { BASIC_RASTER_PRINTER, describedPrinter, OFFICE_PRINTER } from './printer-attributes.ts'

const office = describedPrinter(OFFICE_PRINTER)
const basic = describedPrinter(BASIC_RASTER_PRINTER)
const options = (changes: Partial<ResolvedPrintOptions>): ResolvedPrintOptions => ({
  ...PRINT_OPTION_DEFAULTS,
  ...changes,
})

describe('ippJobAttributes', () => {
  it('sends copies and fit for the default options, leaving the rest to the printer', () => {
    expect(ippJobAttributes(PRINT_OPTION_DEFAULTS, office)).toEqual({ copies: 1, 'print-scaling': 'fit' })
  })

  it('maps every option to its IPP attribute', () => {
    const attributes = ippJobAttributes(
      options({
        copies: 3,
        duplex_mode: 'duplex_long_edge',
        color_mode: 'monochrome',
        media_width_mm: 210,
        media_height_mm: 297,
        orientation: 'portrait',
        scale_mode: 'none',
      }),
      office,
    )
    expect(attributes).toEqual({
      copies: 3,
      sides: 'two-sided-long-edge',
      'print-color-mode': 'monochrome',
      media: 'iso_a4_210x297mm',
      'orientation-requested': 3,
      'print-scaling': 'none',
    })
  })

  it.each([
    ['simplex', 'one-sided'],
    ['duplex_long_edge', 'two-sided-long-edge'],
    ['duplex_short_edge', 'two-sided-short-edge'],
  ] as const)('sends duplex_mode %s as sides %s', (duplexMode, sides) => {
    expect(ippJobAttributes(options({ duplex_mode: duplexMode }), office).sides).toBe(sides)
  })

  it('sends colour and landscape as print-color-mode color and orientation-requested 4', () => {
    const attributes = ippJobAttributes(options({ color_mode: 'color', orientation: 'landscape' }), office)
    expect(attributes['print-color-mode']).toBe('color')
    expect(attributes['orientation-requested']).toBe(4)
  })

  it('names Letter by its keyword', () => {
    const letter = options({ media_width_mm: 215.9, media_height_mm: 279.4 })
    expect(ippJobAttributes(letter, office).media).toBe('na_letter_8.5x11in')
  })

  it('names a sheet given the other way round by its keyword too', () => {
    expect(ippJobAttributes(options({ media_width_mm: 297, media_height_mm: 210 }), office).media).toBe(
      'iso_a4_210x297mm',
    )
  })

  it('asks for another size as media-col media-size in hundredths of a millimetre', () => {
    const attributes = ippJobAttributes(options({ media_width_mm: 100, media_height_mm: 150.5 }), office)
    expect(attributes.media).toBeUndefined()
    expect(attributes['media-col']).toEqual({ 'media-size': { 'x-dimension': 10000, 'y-dimension': 15050 } })
  })

  it.each([['a4_document'], ['invoice'], ['packing_slip']] as const)(
    'prints intent %s on A4 when the job gives no size',
    (intent) => {
      expect(ippJobAttributes(options({ intent }), office).media).toBe('iso_a4_210x297mm')
    },
  )

  it.each([['document'], ['receipt'], ['shipping_label']] as const)(
    'leaves the media of intent %s to the printer',
    (intent) => {
      const attributes = ippJobAttributes(options({ intent }), office)
      expect(attributes.media).toBeUndefined()
      expect(attributes['media-col']).toBeUndefined()
    },
  )

  it('sends no media for a size outside every size and range the printer states', () => {
    const attributes = ippJobAttributes(options({ media_width_mm: 300, media_height_mm: 400 }), office)
    expect(attributes.media).toBeUndefined()
    expect(attributes['media-col']).toBeUndefined()
  })

  it('leaves out every value the printer does not list as supported', () => {
    const attributes = ippJobAttributes(
      options({
        copies: 2,
        duplex_mode: 'duplex_short_edge',
        color_mode: 'color',
        media_width_mm: 100,
        media_height_mm: 150,
        orientation: 'landscape',
        scale_mode: 'fit',
      }),
      basic,
    )
    expect(attributes).toEqual({})
  })

  it('sends a size the printer names even without media-col', () => {
    expect(ippJobAttributes(options({ intent: 'invoice' }), basic)).toEqual({ media: 'iso_a4_210x297mm' })
  })

  it('leaves out copies beyond copies-supported', () => {
    expect(ippJobAttributes(options({ copies: 99 }), office).copies).toBe(99)
    expect(
      ippJobAttributes(
        options({ copies: 99 }),
        describedPrinter(OFFICE_PRINTER, { 'copies-supported': [1, 10] }),
      ).copies,
    ).toBeUndefined()
  })

  it('sends monochrome to a monochrome printer that lists it', () => {
    expect(ippJobAttributes(options({ color_mode: 'monochrome' }), basic)).toEqual({
      'print-color-mode': 'monochrome',
    })
  })
})

import { describe, expect, it } from 'vitest'
import { pwgRasterArgs } from '../../../hub/ipp/ipp-printer.ts'
import { followsPolicy, GHOSTSCRIPT_BASE_ARGS } from '../../../hub/render/ghostscript-policy.ts'
import { PRINT_OPTION_DEFAULTS, type ResolvedPrintOptions } from '../../../protocol/print-job.ts'
import { BASIC_RASTER_PRINTER, describedPrinter, OFFICE_PRINTER } from './printer-attributes.ts'

const office = describedPrinter(OFFICE_PRINTER)
const basic = describedPrinter(BASIC_RASTER_PRINTER)
const options = (changes: Partial<ResolvedPrintOptions>): ResolvedPrintOptions => ({
  ...PRINT_OPTION_DEFAULTS,
  ...changes,
})
/** The arguments after the policy's and the device, up to the output file. */
const settings = (args: string[]) => args.slice(GHOSTSCRIPT_BASE_ARGS.length + 1, -3)

describe('pwgRasterArgs', () => {
  it('gives the whole command line: policy, device, resolution, colour, page size, output, input', () => {
    const args = pwgRasterArgs('/data/in.pdf', '/data/out.pwg', options({ intent: 'invoice' }), office)
    expect(args).toEqual([
      ...GHOSTSCRIPT_BASE_ARGS,
      '-sDEVICE=pwgraster',
      '-r600',
      '-dcupsColorSpace=19',
      '-dcupsBitsPerColor=8',
      '-dDEVICEWIDTHPOINTS=595.28',
      '-dDEVICEHEIGHTPOINTS=841.89',
      '-dFIXEDMEDIA',
      '-dPDFFitPage',
      '-sOutputFile=/data/out.pwg',
      '-f',
      '/data/in.pdf',
    ])
    expect(args[0]).toBe('gs')
    expect(args).toContain('-dSAFER')
    expect(followsPolicy(args)).toBe(true)
  })

  it("renders at the job's dpi when the printer takes it as PWG raster, else at the printer's best", () => {
    expect(settings(pwgRasterArgs('in.pdf', 'out.pwg', options({ dpi: 300 }), office))[0]).toBe('-r300')
    expect(settings(pwgRasterArgs('in.pdf', 'out.pwg', options({ dpi: 203 }), office))[0]).toBe('-r600')
  })

  it('makes grey for monochrome jobs and monochrome printers, colour for colour on a colour printer', () => {
    const colourSpace = (o: ResolvedPrintOptions, printer = office) =>
      settings(pwgRasterArgs('in.pdf', 'out.pwg', o, printer)).slice(1, 3)
    expect(colourSpace(options({ color_mode: 'monochrome' }))).toEqual([
      '-dcupsColorSpace=18',
      '-dcupsBitsPerColor=8',
    ])
    expect(colourSpace(options({ color_mode: 'color' }))).toEqual([
      '-dcupsColorSpace=19',
      '-dcupsBitsPerColor=8',
    ])
    expect(colourSpace(options({ color_mode: 'color' }), basic)).toEqual([
      '-dcupsColorSpace=18',
      '-dcupsBitsPerColor=8',
    ])
    expect(
      colourSpace(
        options({}),
        describedPrinter(BASIC_RASTER_PRINTER, { 'pwg-raster-document-type-supported': 'black_1' }),
      ),
    ).toEqual(['-dcupsColorSpace=3', '-dcupsBitsPerColor=1'])
  })

  it("sizes the page from the job's media, else the printer's default media", () => {
    const pageSize = (o: ResolvedPrintOptions, printer = office) =>
      settings(pwgRasterArgs('in.pdf', 'out.pwg', o, printer)).slice(3)
    expect(pageSize(options({ media_width_mm: 100, media_height_mm: 150 }))).toEqual([
      '-dDEVICEWIDTHPOINTS=283.46',
      '-dDEVICEHEIGHTPOINTS=425.2',
      '-dFIXEDMEDIA',
      '-dPDFFitPage',
    ])
    // basic's default media is Letter (media-default; it has no media-col-default)
    expect(pageSize(options({}), basic)).toEqual([
      '-dDEVICEWIDTHPOINTS=612',
      '-dDEVICEHEIGHTPOINTS=792',
      '-dFIXEDMEDIA',
      '-dPDFFitPage',
    ])
  })

  it('scales pages to the media only for scale_mode fit', () => {
    const args = pwgRasterArgs(
      'in.pdf',
      'out.pwg',
      options({ intent: 'invoice', scale_mode: 'none' }),
      office,
    )
    expect(args).toContain('-dFIXEDMEDIA')
    expect(args).not.toContain('-dPDFFitPage')
  })

  it('keeps each page its own size when neither the job nor the printer names a media', () => {
    const printer = describedPrinter(BASIC_RASTER_PRINTER, { 'media-default': undefined })
    expect(settings(pwgRasterArgs('in.pdf', 'out.pwg', options({}), printer)).slice(3)).toEqual([])
  })

  it('gives absolute paths to Ghostscript', () => {
    const args = pwgRasterArgs('in.pdf', 'out.pwg', options({}), office)
    expect(args.at(-1)).toBe(`${process.cwd()}/in.pdf`)
    expect(args.at(-3)).toBe(`-sOutputFile=${process.cwd()}/out.pwg`)
  })
})

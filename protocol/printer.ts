import { type Static, Type } from 'typebox'
import { DocumentFormat, RawLanguage } from './enums.ts'
import { PrinterHealth } from './printer-health.ts'

const Uuid = Type.String({ format: 'uuid' })
const DateTime = Type.String({ format: 'date-time' })

const Dpi = Type.Integer({ minimum: 72, maximum: 2400 })
const MmRange = Type.Object({ min: Type.Number({ minimum: 0 }), max: Type.Number({ minimum: 0 }) })

/**
 * What a printer can take; reported by its hub, checked at job creation (print-api/route-check.ts:
 * formats and languages are its route, 409; options beyond the rest are fields, 422). Fields added after the
 * first hubs are optional, so a hub that does not report them keeps working.
 */
export const PrinterCapabilities = Type.Object(
  {
    document_formats: Type.Array(DocumentFormat, {
      maxItems: 8,
      description: 'pdf is rendered by the hub; raw passes through',
    }),
    raw_languages: Type.Array(RawLanguage, { maxItems: 8, description: 'raw printer languages it speaks' }),
    dpi: Type.Array(Dpi, {
      maxItems: 16,
      description: 'resolutions it prints at; empty when unknown (then any dpi is accepted)',
    }),
    default_dpi: Type.Optional(
      Type.Union([Dpi, Type.Null()], {
        description: 'the resolution a job without dpi is rendered at; null or absent: the first of dpi',
      }),
    ),
    media_width_mm: Type.Object(MmRange.properties, {
      description: 'widths of media it takes (for a receipt printer, its paper; its head may print less)',
    }),
    media_height_mm: Type.Union([MmRange, Type.Null()], {
      description: 'lengths of media it takes; null for continuous media (receipt rolls)',
    }),
    default_media: Type.Optional(
      Type.Union(
        [
          Type.Object({
            width_mm: Type.Number({ minimum: 0 }),
            height_mm: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
              description: 'null for continuous media',
            }),
          }),
          Type.Null(),
        ],
        {
          description:
            "the media loaded, used when a job gives no media size; null or absent: the hub's own choice",
        },
      ),
    ),
    color: Type.Boolean({ description: 'prints in colour' }),
    duplex: Type.Boolean({ description: 'prints on both sides' }),
  },
  { title: 'PrinterCapabilities', additionalProperties: false },
)
export type PrinterCapabilities = Static<typeof PrinterCapabilities>

export const Printer = Type.Object(
  {
    printer_id: Uuid,
    agent_id: Uuid,
    name: Type.String(),
    languages: Type.Array(RawLanguage, { description: 'raw printer languages it speaks' }),
    capabilities: PrinterCapabilities,
    online: Type.Boolean({ description: 'its hub is connected and reports the printer' }),
    health: Type.Union([PrinterHealth, Type.Null()], {
      description: "the printer's last reported state; null until its hub reports it",
    }),
    last_seen_at: Type.Union([DateTime, Type.Null()]),
    created_at: DateTime,
  },
  { title: 'Printer', additionalProperties: false },
)
export type Printer = Static<typeof Printer>

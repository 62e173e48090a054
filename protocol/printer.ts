import { type Static, Type } from 'typebox'
import { DocumentFormat, RawLanguage } from './enums.ts'
import { PrinterHealth } from './printer-health.ts'

const Uuid = Type.String({ format: 'uuid' })
const DateTime = Type.String({ format: 'date-time' })

/** What a printer can take; reported by its hub, checked at job creation (route check). */
export const PrinterCapabilities = Type.Object(
  {
    document_formats: Type.Array(DocumentFormat, {
      maxItems: 8,
      description: 'pdf is rendered by the hub; raw passes through',
    }),
    raw_languages: Type.Array(RawLanguage, { maxItems: 8 }),
    dpi: Type.Array(Type.Integer({ minimum: 72, maximum: 2400 }), {
      maxItems: 16,
      description: 'resolutions it prints at',
    }),
    media_width_mm: Type.Object({
      min: Type.Number({ minimum: 0 }),
      max: Type.Number({ minimum: 0 }),
    }),
    media_height_mm: Type.Union(
      [Type.Object({ min: Type.Number({ minimum: 0 }), max: Type.Number({ minimum: 0 }) }), Type.Null()],
      {
        description: 'null for continuous media (receipt rolls)',
      },
    ),
    color: Type.Boolean(),
    duplex: Type.Boolean(),
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

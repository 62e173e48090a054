import { type Static, Type } from 'typebox'
import {
  ColorMode,
  DocumentFormat,
  DuplexMode,
  Intent,
  Orientation,
  PrintJobStatus,
  RawLanguage,
  ScaleMode,
} from './enums.ts'
import { BLOCKING_HEALTH_STATES } from './printer-health.ts'
import { StoredText } from './stored-text.ts'

const Uuid = Type.String({ format: 'uuid' })
const DateTime = Type.String({ format: 'date-time' })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()])

/** Spec: Limits. Each bound is enforced by the schema and reported per field in a 422. */
const MediaMm = Type.Number({ minimum: 1, maximum: 2000 })
const Dpi = Type.Integer({ minimum: 72, maximum: 2400 })

/** Said of every option that only shapes how a PDF is rendered (docs/printing-api.md: options and RAW payloads). */
const RENDERING_ONLY = 'Shapes how a PDF is rendered; ignored for RAW payloads, which are sent as they are.'
const checked = (what: string) =>
  `For a PDF it is checked against the printer's ${what}: a value outside them is a 422 naming this field.`
const leftToPrinter = (what: string, value: string) =>
  `\`default\` leaves it to the printer and always passes; ${value} on a printer without ${what} is a 422 ` +
  'naming this field, whatever the format.'
const OffsetMm = Type.Number({ minimum: -2000, maximum: 2000, description: RENDERING_ONLY })
const MarginMm = Type.Number({ minimum: 0, maximum: 2000, description: RENDERING_ONLY })

/**
 * Spec: Shared print options, written once: as a print job carries them (every option present, resolved to
 * its default when omitted); requests take the same options, each optional.
 */
export const ResolvedPrintOptions = Type.Object({
  copies: Type.Integer({ minimum: 1, maximum: 99, description: 'Honoured for every format.' }),
  intent: Intent,
  color_mode: Type.Union([ColorMode], { description: leftToPrinter('colour', '`color`') }),
  duplex_mode: Type.Union([DuplexMode], { description: leftToPrinter('duplex', 'a `duplex_*` value') }),
  media_width_mm: Type.Union([MediaMm, Type.Null()], {
    description: `Null: the printer's media. ${RENDERING_ONLY} ${checked('media widths')}`,
  }),
  media_height_mm: Type.Union([MediaMm, Type.Null()], {
    description: `Null: the printer's media. ${RENDERING_ONLY} ${checked('media lengths')}`,
  }),
  dpi: Type.Union([Dpi, Type.Null()], {
    description: `Null: the printer's resolution. ${RENDERING_ONLY} ${checked('resolutions')}`,
  }),
  scale_mode: Type.Union([ScaleMode], { description: RENDERING_ONLY }),
  orientation: Type.Union([Orientation], { description: RENDERING_ONLY }),
  offset_x_mm: OffsetMm,
  offset_y_mm: OffsetMm,
  margin_top_mm: MarginMm,
  margin_right_mm: MarginMm,
  margin_bottom_mm: MarginMm,
  margin_left_mm: MarginMm,
})
export type ResolvedPrintOptions = Static<typeof ResolvedPrintOptions>

/** Spec: Shared print options in a request: all optional; PRINT_OPTION_DEFAULTS apply when omitted. */
export const PrintOptions = Type.Partial(ResolvedPrintOptions)
export type PrintOptions = Static<typeof PrintOptions>

/**
 * The options that only shape how a PDF is rendered: media, resolution, scaling, orientation, offsets and
 * margins. A RAW payload goes to the printer byte for byte, so for it they are ignored: not checked against
 * the printer, and offered to its hub as their defaults (the job still shows what was asked).
 */
export const RENDERING_OPTION_KEYS = [
  'media_width_mm',
  'media_height_mm',
  'dpi',
  'scale_mode',
  'orientation',
  'offset_x_mm',
  'offset_y_mm',
  'margin_top_mm',
  'margin_right_mm',
  'margin_bottom_mm',
  'margin_left_mm',
] as const satisfies readonly (keyof ResolvedPrintOptions)[]

/** The names of the print options, in the spec's order. */
export const PRINT_OPTION_KEYS = Object.keys(
  ResolvedPrintOptions.properties,
) as (keyof ResolvedPrintOptions)[]

/** The resolved print options of a job (or of anything that carries them all), without anything else. */
export function resolvedOptionsOf(source: ResolvedPrintOptions): ResolvedPrintOptions {
  return Object.fromEntries(PRINT_OPTION_KEYS.map((key) => [key, source[key]])) as ResolvedPrintOptions
}

/** The print options of a request body or a job, without anything else. */
export function printOptionsOf(source: PrintOptions): PrintOptions {
  const options: Record<string, unknown> = {}
  for (const key of PRINT_OPTION_KEYS) if (source[key] !== undefined) options[key] = source[key]
  return options as PrintOptions
}

/**
 * Defaults of omitted options (the spec leaves them open). One copy; `default` leaves colour, duplex and
 * orientation to the printer; media and dpi come from the printer; PDFs are scaled to fit the media, as
 * label and receipt printers need; no offset and no extra margin.
 */
export const PRINT_OPTION_DEFAULTS: ResolvedPrintOptions = {
  copies: 1,
  intent: 'document',
  color_mode: 'default',
  duplex_mode: 'default',
  media_width_mm: null,
  media_height_mm: null,
  dpi: null,
  scale_mode: 'fit',
  orientation: 'default',
  offset_x_mm: 0,
  offset_y_mm: 0,
  margin_top_mm: 0,
  margin_right_mm: 0,
  margin_bottom_mm: 0,
  margin_left_mm: 0,
}

const DocumentSource = {
  document_filename: Type.Optional(Nullable(StoredText({ minLength: 1, maxLength: 255 }))),
  document_format: Type.Optional(Nullable(DocumentFormat)),
  document_raw_language: Type.Optional(Nullable(RawLanguage)),
  printer_id: Uuid,
}

export const CreatePrintJobBody = Type.Object(
  { document_id: Uuid, printer_id: Uuid, ...PrintOptions.properties },
  { additionalProperties: false },
)
export type CreatePrintJobBody = Static<typeof CreatePrintJobBody>

export const CreatePrintJobFromUrlBody = Type.Object(
  {
    document_url: Type.String({
      minLength: 1,
      maxLength: 2048,
      format: 'uri',
      description: 'A public HTTPS URL; the service fetches it, checking every address and redirect.',
    }),
    ...DocumentSource,
    ...PrintOptions.properties,
  },
  { additionalProperties: false },
)
export type CreatePrintJobFromUrlBody = Static<typeof CreatePrintJobFromUrlBody>

export const CreatePrintJobFromBase64Body = Type.Object(
  {
    // contentEncoding, not `format: byte`: OpenAPI 3.1 names Base64 content so (JSON Schema 2020-12 §8.3), and
    // `byte` means RFC 4648 text without line breaks, which the service takes. The document adds the alphabet
    // as a pattern (cloud/openapi/components.ts); the decoder checks it here and answers 400 invalid_base64.
    document_base64: Type.String({
      minLength: 1,
      contentEncoding: 'base64',
      description:
        'The whole document as Base64 (RFC 4648 §4, padded), without a data: URL prefix. Line breaks (LF or CRLF), as MIME and PEM encoders insert them, are ignored.',
    }),
    ...DocumentSource,
    ...PrintOptions.properties,
  },
  { additionalProperties: false },
)
export type CreatePrintJobFromBase64Body = Static<typeof CreatePrintJobFromBase64Body>

/**
 * Why a job that has not started printing is waiting (an additive field within v1): its hub reported that
 * the printer cannot be reached or needs a person (paper, cover, jam, paused). Null otherwise.
 */
export const WAITING_REASONS = ['printer_unreachable', ...BLOCKING_HEALTH_STATES] as const
export const WaitingReason = Type.Enum(WAITING_REASONS, { title: 'WaitingReason' })
export type WaitingReason = Static<typeof WaitingReason>

/** Spec: Resources → Print job. Every field is always present; nullable ones as null. */
export const PrintJob = Type.Object(
  {
    print_job_id: Uuid,
    document_id: Uuid,
    document_mime_type: Type.String(),
    document_format: DocumentFormat,
    document_raw_language: Nullable(RawLanguage),
    printer_id: Uuid,
    status: PrintJobStatus,
    ...ResolvedPrintOptions.properties,
    created_at: DateTime,
    reserved_at: Nullable(DateTime),
    started_at: Nullable(DateTime),
    completed_at: Nullable(DateTime),
    failure_reason: Nullable(Type.String()),
    failure_detail: Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
      description:
        'Additive: what the hub said about a failure, in words (e.g. why a PDF could not be rendered, or the ' +
        "printer's own reason); null when the job has not failed or nothing was said. For people, not for code: " +
        'branch on failure_reason.',
    }),
    waiting_reason: Type.Union([WaitingReason, Type.Null()], {
      description:
        'Additive: why a pending or reserved job is not printing yet, as its hub reported it; null otherwise.',
    }),
    origin: Type.Enum(['cloud', 'lan'], {
      description:
        "Additive: where the job was submitted: `cloud`, or `lan` on its hub's LAN print API (while the shop's " +
        'internet was down, say); a LAN job keeps the id the hub gave it.',
    }),
    duplicate_of: Type.Union([Uuid, Type.Null()], {
      description:
        "Additive: the job that printed this job's request instead: the same request (the same Idempotency-Key) " +
        "was taken on the hub's LAN first, so this one was dropped (`cancelled`, none of it printed). Null otherwise.",
    }),
  },
  { title: 'PrintJob', additionalProperties: false },
)
export type PrintJob = Static<typeof PrintJob>

export const PrintJobIdParams = Type.Object({ printJobId: Uuid })

export const ListPrintJobsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Uuid),
    status: Type.Optional(PrintJobStatus),
    printer_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
)
export type ListPrintJobsQuery = Static<typeof ListPrintJobsQuery>

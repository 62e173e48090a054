import { Type } from 'typebox'

export const PRINT_JOB_STATUSES = [
  'pending',
  'reserved',
  'printing',
  'printed',
  'failed',
  'cancelled',
] as const
export const TERMINAL_PRINT_JOB_STATUSES = ['printed', 'failed', 'cancelled'] as const
export const DOCUMENT_FORMATS = ['pdf', 'raw'] as const
export const RAW_LANGUAGES = ['tspl', 'zpl', 'cpcl', 'escpos'] as const
export const INTENTS = [
  'document',
  'shipping_label',
  'product_label',
  'invoice',
  'packing_slip',
  'a4_document',
  'receipt',
] as const
export const COLOR_MODES = ['default', 'monochrome', 'color'] as const
export const DUPLEX_MODES = ['default', 'simplex', 'duplex_long_edge', 'duplex_short_edge'] as const
export const SCALE_MODES = ['none', 'fit'] as const
export const ORIENTATIONS = ['default', 'portrait', 'landscape'] as const
/** Scopes of account API clients on /api/v1 (spec: Authentication). */
export const SCOPES = [
  'printers:read',
  'documents:write',
  'print_jobs:write',
  'print_jobs:read',
  'webhooks:write',
] as const

// Titles name the enums in the OpenAPI document (components a generated client imports).
export const PrintJobStatus = Type.Enum(PRINT_JOB_STATUSES, { title: 'PrintJobStatus' })
export const DocumentFormat = Type.Enum(DOCUMENT_FORMATS, { title: 'DocumentFormat' })
export const RawLanguage = Type.Enum(RAW_LANGUAGES, { title: 'RawLanguage' })
export const Intent = Type.Enum(INTENTS, { title: 'Intent' })
export const ColorMode = Type.Enum(COLOR_MODES, { title: 'ColorMode' })
export const DuplexMode = Type.Enum(DUPLEX_MODES, { title: 'DuplexMode' })
export const ScaleMode = Type.Enum(SCALE_MODES, { title: 'ScaleMode' })
export const Orientation = Type.Enum(ORIENTATIONS, { title: 'Orientation' })
export const Scope = Type.Enum(SCOPES, { title: 'Scope' })

export type PrintJobStatus = (typeof PRINT_JOB_STATUSES)[number]
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number]
export type RawLanguage = (typeof RAW_LANGUAGES)[number]
export type Scope = (typeof SCOPES)[number]
export type Intent = (typeof INTENTS)[number]

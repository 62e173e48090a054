import type { RawLanguage } from '../../protocol/enums.ts'
import type { Printer, PrinterCapabilities } from '../../protocol/printer.ts'
import type { HealthState } from '../../protocol/printer-health.ts'
import { type Html, html } from './layout.ts'

/** A printer's reported state in words (the badge's colour only repeats it). */
export const HEALTH_WORDS: Record<HealthState, string> = {
  ready: 'Ready',
  busy: 'Busy',
  paper_out: 'Out of paper',
  paper_low: 'Paper low',
  cover_open: 'Cover open',
  paper_jam: 'Paper jam',
  head_error: 'Print head error',
  cutter_error: 'Cutter error',
  paused: 'Paused',
  offline: 'Printer offline',
  error: 'Error',
  unknown: 'Does not report its state',
}

const HEALTH_BADGES: Partial<Record<HealthState, 'ok' | 'warn' | 'bad'>> = {
  ready: 'ok',
  busy: 'ok',
  paper_low: 'warn',
  paused: 'warn',
  paper_out: 'bad',
  cover_open: 'bad',
  paper_jam: 'bad',
  head_error: 'bad',
  cutter_error: 'bad',
  offline: 'bad',
  error: 'bad',
}

export const LANGUAGE_NAMES: Record<RawLanguage, string> = {
  escpos: 'ESC/POS',
  zpl: 'ZPL',
  tspl: 'TSPL',
  cpcl: 'CPCL',
}

const badge = (kind: string | undefined, words: string): Html =>
  html`<span class="${kind ? `badge ${kind}` : 'badge'}">${words}</span>`

/** Online or offline, in words. */
export const onlineBadge = (printer: Pick<Printer, 'online'>): Html =>
  printer.online ? badge('ok', 'Online') : badge('bad', 'Offline')

/** The last reported health, in words; "Not reported yet" before its hub reports it. */
export const healthBadge = (printer: Pick<Printer, 'health'>): Html =>
  printer.health
    ? badge(HEALTH_BADGES[printer.health.state], HEALTH_WORDS[printer.health.state])
    : badge(undefined, 'Not reported yet')

/** "ESC/POS, ZPL" or "None". */
export const languageWords = (languages: readonly RawLanguage[]): string =>
  languages.length === 0 ? 'None' : languages.map((l) => LANGUAGE_NAMES[l]).join(', ')

/** "PDF, raw" or "None". */
export const formatWords = (capabilities: Pick<PrinterCapabilities, 'document_formats'>): string =>
  capabilities.document_formats.length === 0
    ? 'None'
    : capabilities.document_formats.map((f) => (f === 'pdf' ? 'PDF' : 'Raw')).join(', ')

/** A range of millimetres: "58–80 mm", or one size where min and max agree. */
export const mmRangeWords = (range: { min: number; max: number } | null): string =>
  range === null
    ? 'Continuous (a roll)'
    : range.min === range.max
      ? `${range.min} mm`
      : `${range.min}–${range.max} mm`

import type { RawLanguage } from '../../protocol/enums.ts'
import type { Transport } from '../transports/transport.ts'
import type { StatusReason } from './health-state.ts'
import type { MediaDefaults } from './media-defaults.ts'
import type { RasterEncoding } from './raster-job.ts'

/**
 * Asks a printer for its status over an open transport; null when it does not answer. Rejects only with
 * the transport's own errors.
 */
export type StatusReader = (transport: Transport, timeoutMs: number) => Promise<StatusReason[] | null>

/**
 * Everything the hub knows about one printer language, in one place (as LPrint keeps one driver file per
 * language, lprint-zpl.c, lprint-tspl.c ...). Adding a language is adding one file that exports one of
 * these and naming it in index.ts.
 */
export interface LanguageDriver {
  readonly language: RawLanguage
  /** The media assumed when a printer URI does not state it. */
  readonly mediaDefaults: MediaDefaults
  readonly readStatus: StatusReader
  /** Prints 1-bit page bitmaps (the hub's rendering of a PDF) in this language. */
  readonly raster: RasterEncoding
}

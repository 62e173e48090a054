import type { PrinterHealth } from '../../protocol/printer-health.ts'
import { IppError } from './ipp-error.ts'
import type { IppHttpOptions } from './ipp-http.ts'
import { getPrinterAttributes } from './ipp-operations.ts'
import { parseIppUri } from './ipp-uri.ts'
import {
  DESCRIPTION_ATTRIBUTES,
  describeAttributes,
  HEALTH_ATTRIBUTES,
  healthOfAttributes,
  type IppPrinterDescription,
} from './printer-description.ts'
import { ippErrorHealth } from './printer-health.ts'

export interface IppQueryOptions {
  timeoutMs: number
  signal?: AbortSignal
  /** For `ipps://` printers; see IppHttpOptions. */
  tls?: IppHttpOptions['tls']
  /** The clock for `checked_at`. */
  now?: () => Date
}

/**
 * Asks a printer what it is and can do (Get-Printer-Attributes, RFC 8011 §4.2.5). Rejects with an IppError
 * when it cannot be reached or does not answer as an IPP printer; ippErrorHealth(error) is then its health.
 */
export async function describeIppPrinter(
  uri: string,
  options: IppQueryOptions,
): Promise<IppPrinterDescription> {
  const attributes = await getPrinterAttributes(parseIppUri(uri), DESCRIPTION_ATTRIBUTES, options)
  return describeAttributes(attributes, (options.now ?? (() => new Date()))())
}

/**
 * The printer's health from printer-state and printer-state-reasons; a printer that cannot be reached is
 * `offline`, one that answers wrongly `error` (never rejects for either).
 */
export async function readIppHealth(uri: string, options: IppQueryOptions): Promise<PrinterHealth> {
  const now = options.now ?? (() => new Date())
  try {
    const attributes = await getPrinterAttributes(parseIppUri(uri), HEALTH_ATTRIBUTES, options)
    return healthOfAttributes(attributes, now())
  } catch (error) {
    if (error instanceof IppError) return ippErrorHealth(error, now())
    throw error
  }
}

import { readFileSync } from 'node:fs'
import type { PrinterCapabilities } from '../../protocol/printer.ts'
import { IppUriError, parseIppUri } from '../ipp/ipp-printer.ts'
import type { PrinterSpec } from './printer-spec.ts'
import { PrinterUriError } from './printer-uri.ts'

/**
 * An office printer the hub reaches by IPP (`ipp://HOST[:631]/PATH`, `ipps://…`): it takes PDFs (or PWG
 * raster the hub makes from them), never RAW payloads. What it can do is learnt from the printer itself
 * (Get-Printer-Attributes) once it answers; until then its capabilities are UNDESCRIBED_IPP_CAPABILITIES.
 */
export interface IppPrinterSpec {
  /** The printer's URI without the hub's options: its identity, from which printer_id derives. */
  key: string
  name: string
  ipp: {
    uri: string
    /** The certificate (PEM) an `ipps://` printer's own must chain to (`ca_file=`); null: the system's CAs. */
    ca: Buffer | null
    caFile: string | null
  }
  capabilities: PrinterCapabilities
}

/** A printer this hub drives: raster (receipt and label printers) or IPP. */
export type AnyPrinterSpec = PrinterSpec | IppPrinterSpec

export function isIppPrinter(spec: AnyPrinterSpec): spec is IppPrinterSpec {
  return 'ipp' in spec
}

/** The hub's own options on an IPP printer URI; a printer's own query would be ambiguous, so none is taken. */
const IPP_OPTIONS = ['name', 'ca_file']

/**
 * An IPP printer before it answered: PDFs of any media and resolution, no colour or duplex (asked for, they
 * would be refused until the printer says it has them).
 */
export const UNDESCRIBED_IPP_CAPABILITIES: PrinterCapabilities = {
  document_formats: ['pdf'],
  raw_languages: [],
  dpi: [],
  media_width_mm: { min: 1, max: 2000 },
  media_height_mm: { min: 1, max: 2000 },
  color: false,
  duplex: false,
}

export function isIppUri(uri: string): boolean {
  return /^ipps?:\/\//i.test(uri.trim())
}

/** Parses `ipp://…` or `ipps://…` with the hub's options `name=` and `ca_file=` (read now). */
export function parseIppPrinterUri(uri: string): IppPrinterSpec {
  const fail = (problem: string): never => {
    throw new PrinterUriError(uri, problem)
  }
  const at = uri.indexOf('?')
  const base = at === -1 ? uri.trim() : uri.slice(0, at).trim()
  const query = new URLSearchParams(at === -1 ? '' : uri.slice(at + 1))
  const options = new Map<string, string>()
  for (const [name, value] of query) {
    if (!IPP_OPTIONS.includes(name)) fail(`unknown option "${name}" (allowed: ${IPP_OPTIONS.join(', ')})`)
    if (options.has(name)) fail(`option "${name}" given twice`)
    options.set(name, value)
  }
  let printerUri = ''
  try {
    printerUri = parseIppUri(base).printerUri
  } catch (error) {
    if (error instanceof IppUriError) fail(error.message.replace(/^IPP printer URI "[^"]*": /, ''))
    throw error
  }
  const name = options.get('name')?.trim()
  if (name === '') fail('name= is empty')
  const caFile = options.get('ca_file') ?? null
  if (caFile !== null && !printerUri.startsWith('ipps:')) fail('ca_file= is for ipps:// printers')
  let ca: Buffer | null = null
  if (caFile !== null) {
    try {
      ca = readFileSync(caFile)
    } catch (error) {
      fail(`ca_file=${caFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? error})`)
    }
  }
  return {
    key: printerUri,
    name: name ?? `IPP printer at ${printerUri}`,
    ipp: { uri: printerUri, ca, caFile },
    capabilities: UNDESCRIBED_IPP_CAPABILITIES,
  }
}

/** The URI that configures this printer again (shown to the cloud as the printer's `uri`). */
export function ippPrinterUriOf(spec: IppPrinterSpec): string {
  const query = new URLSearchParams()
  if (spec.name !== `IPP printer at ${spec.ipp.uri}`) query.set('name', spec.name)
  if (spec.ipp.caFile !== null) query.set('ca_file', spec.ipp.caFile)
  const options = query.toString().replaceAll('+', '%20')
  return options ? `${spec.ipp.uri}?${options}` : spec.ipp.uri
}

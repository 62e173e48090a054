import ipp from 'ipp'
import { IppError } from './ipp-error.ts'
import { ippFramingProblem } from './ipp-framing.ts'

/** One attribute group as the `ipp` package reads and writes it: name → value, or values for a 1setOf. */
export type IppAttributes = Record<string, unknown>

export type IppOperation = 'Print-Job' | 'Get-Printer-Attributes' | 'Get-Job-Attributes' | 'Cancel-Job'

export interface IppResponse {
  /** The status code as sent (RFC 8011 Appendix B); 0x0000–0x00ff are successes. */
  statusCode: number
  /** Its keyword (`server-error-busy`), or its hex code when the package does not know it. */
  status: string
  operationAttributes: IppAttributes
  printerAttributes: IppAttributes
  jobAttributes: IppAttributes
}

/** The parts of the `ipp` package this module uses; @types/ipp types them as bare objects. */
interface IppTables {
  attributes: Record<string, Record<string, unknown>>
  keywords: Record<string, string[]>
  enums: Record<string, { lookup: (string | undefined)[] } & Record<string, number>>
  statusCodes: { lookup: (string | undefined)[] }
}
const tables = ipp as unknown as IppTables

// The package's attribute tables predate PWG 5100.13; it refuses to write an attribute it has no entry for.
// print-scaling (PWG 5100.13 §6.2.5) is a type2 keyword, written exactly as "sides" is.
const jobTemplate = tables.attributes['Job Template']!
jobTemplate['print-scaling'] ??= { ...(jobTemplate.sides as object) }

// Out-of-band values (RFC 8010 §3.5.2: unsupported, unknown, no-value) have no value to read; the package
// logs each one to stdout unless told what to do with it. They are read as absent.
const parser = ipp.parse as typeof ipp.parse & {
  handleUnknownTag(tag: number, name: string, length: number, read: (length: number) => string): unknown
}
parser.handleUnknownTag = (_tag, _name, length, read) => {
  if (length > 0) read(length)
  return undefined
}

/**
 * The IPP version of every request: 1.1, which every IPP printer answers (PWG 5100.12 §4.1: an IPP/2.x
 * printer takes IPP/1.1 requests too, as CUPS's ipp-2.0.test checks).
 */
const IPP_VERSION = '1.1'

/**
 * An IPP request without its document: the operation attributes (charset and natural language first, then
 * the target, RFC 8011 §4.1.4), then Job Template attributes. An enum given as its number (RFC 8011
 * §5.2.10's 3 for portrait) is written as the package wants it, by name.
 */
export function encodeIppRequest(
  operation: IppOperation,
  requestId: number,
  operationAttributes: IppAttributes,
  jobAttributes: IppAttributes = {},
): Buffer {
  const message: Record<string, unknown> = {
    version: IPP_VERSION,
    operation,
    id: requestId,
    'operation-attributes-tag': {
      'attributes-charset': 'utf-8',
      'attributes-natural-language': 'en',
      ...operationAttributes,
    },
  }
  if (typeof jobAttributes.media === 'string') knowMediaKeyword(jobAttributes.media)
  if (Object.keys(jobAttributes).length > 0)
    message['job-attributes-tag'] = Object.fromEntries(
      Object.entries(jobAttributes).map(([name, value]) => [name, enumByName(name, value)]),
    )
  try {
    return ipp.serialize(message)
  } catch (error) {
    // The package throws strings ("Unknown attribute: x").
    throw new Error(`cannot encode ${operation}: ${String(error)}`)
  }
}

/**
 * "media" is keyword or name (RFC 8011 §5.2.11), and the package writes a value as a keyword only when its
 * own list has it: `oe_photo-l_3.5x5in` would go as a name. The hub only ever sends a printer's own
 * media-supported size keyword (PWG 5101.1), so it adds the ones the list lacks.
 */
function knowMediaKeyword(keyword: string): void {
  const known = tables.keywords.media
  if (known && !known.includes(keyword)) known.push(keyword)
}

function enumByName(attribute: string, value: unknown): unknown {
  const table = tables.enums[attribute]
  if (typeof value !== 'number' || table === undefined) return value
  const name = table.lookup[value]
  if (name === undefined) throw new Error(`${attribute}: no enum value ${value}`)
  return name
}

/** Reads an IPP response; IppError `malformed` when it is not one. */
export function decodeIppResponse(body: Buffer): IppResponse {
  const problem = ippFramingProblem(body)
  if (problem) throw new IppError('malformed', `the printer's answer is not an IPP message: ${problem}`)
  const statusCode = body.readUInt16BE(2)
  let parsed: Record<string, unknown>
  try {
    parsed = ipp.parse(body) as unknown as Record<string, unknown>
  } catch (error) {
    throw new IppError('malformed', `the printer's answer could not be read: ${String(error)}`, {
      cause: error,
    })
  }
  return {
    statusCode,
    status: tables.statusCodes.lookup[statusCode] ?? `0x${statusCode.toString(16).padStart(4, '0')}`,
    operationAttributes: firstGroup(parsed['operation-attributes-tag']),
    printerAttributes: firstGroup(parsed['printer-attributes-tag']),
    jobAttributes: firstGroup(parsed['job-attributes-tag']),
  }
}

/** The package gives a group that occurs more than once (Get-Jobs) as an array; these operations need one. */
function firstGroup(group: unknown): IppAttributes {
  const first = Array.isArray(group) ? group[0] : group
  return typeof first === 'object' && first !== null ? (first as IppAttributes) : {}
}

/** RFC 8011 Appendix B: 0x0000–0x00ff are successful-ok and its variants. */
export function isSuccess(response: IppResponse): boolean {
  return response.statusCode <= 0x00ff
}

/** The enum number of a value the package read by name (it turns known enums into their keywords). */
export function enumNumber(attribute: string, value: unknown): number | null {
  if (typeof value === 'number') return value
  if (typeof value !== 'string') return null
  const number = tables.enums[attribute]?.[value]
  return typeof number === 'number' ? number : null
}

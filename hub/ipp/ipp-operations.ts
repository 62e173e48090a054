import {
  decodeIppResponse,
  encodeIppRequest,
  type IppAttributes,
  type IppOperation,
  type IppResponse,
  isSuccess,
} from './ipp-codec.ts'
import { IppError } from './ipp-error.ts'
import { type IppHttpOptions, postIpp } from './ipp-http.ts'
import type { IppEndpoint } from './ipp-uri.ts'

/** Who the hub's requests come from (requesting-user-name); printers show it as the job's owner. */
export const REQUESTING_USER_NAME = 'print-hub'

// RFC 8011 §4.1.1: request-id is 1 to 2^31 - 1, chosen by the client; answers carry it back.
let lastRequestId = 0
const nextRequestId = () => {
  lastRequestId = (lastRequestId % 0x7fffffff) + 1
  return lastRequestId
}

async function call(
  endpoint: IppEndpoint,
  operation: IppOperation,
  operationAttributes: IppAttributes,
  options: IppHttpOptions & { jobAttributes?: IppAttributes; documentPath?: string },
): Promise<IppResponse> {
  // The target first, job-id right after it, as the ipp package and CUPS order them (RFC 8011 §4.1.5).
  const { 'job-id': jobId, ...rest } = operationAttributes
  const target = jobId === undefined ? {} : { 'job-id': jobId }
  const request = encodeIppRequest(
    operation,
    nextRequestId(),
    { 'printer-uri': endpoint.printerUri, ...target, 'requesting-user-name': REQUESTING_USER_NAME, ...rest },
    options.jobAttributes,
  )
  const response = decodeIppResponse(await postIpp(endpoint, request, options))
  if (!isSuccess(response)) {
    const said = response.operationAttributes['status-message']
    const detail = typeof said === 'string' && said !== '' ? `: ${said}` : ''
    throw new IppError('ipp_status', `${operation} answered ${response.status}${detail}`, {
      ippStatus: response.status,
      ...(typeof jobId === 'number' ? { jobId } : {}),
    })
  }
  return response
}

/** Get-Printer-Attributes (RFC 8011 §4.2.5) for the attributes named; the Printer's attributes. */
export async function getPrinterAttributes(
  endpoint: IppEndpoint,
  requestedAttributes: readonly string[],
  options: IppHttpOptions,
): Promise<IppAttributes> {
  const response = await call(
    endpoint,
    'Get-Printer-Attributes',
    { 'requested-attributes': [...requestedAttributes] },
    options,
  )
  return response.printerAttributes
}

export interface IppDocument {
  path: string
  format: string
  jobName: string
}

/** Print-Job (RFC 8011 §4.2.1): the request, then the document; the new job's attributes (with job-id). */
export async function printJob(
  endpoint: IppEndpoint,
  document: IppDocument,
  jobAttributes: IppAttributes,
  options: IppHttpOptions,
): Promise<IppAttributes> {
  const response = await call(
    endpoint,
    'Print-Job',
    { 'job-name': document.jobName, 'document-format': document.format },
    { ...options, jobAttributes, documentPath: document.path },
  )
  return response.jobAttributes
}

/** Get-Job-Attributes (RFC 8011 §4.3.4) for the attributes named. */
export async function getJobAttributes(
  endpoint: IppEndpoint,
  jobId: number,
  requestedAttributes: readonly string[],
  options: IppHttpOptions,
): Promise<IppAttributes> {
  const response = await call(
    endpoint,
    'Get-Job-Attributes',
    { 'job-id': jobId, 'requested-attributes': [...requestedAttributes] },
    options,
  )
  return response.jobAttributes
}

/** Cancel-Job (RFC 8011 §4.3.3). */
export async function cancelJob(
  endpoint: IppEndpoint,
  jobId: number,
  options: IppHttpOptions,
): Promise<void> {
  await call(endpoint, 'Cancel-Job', { 'job-id': jobId }, options)
}

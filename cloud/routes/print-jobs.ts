import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { decodeDocumentBase64 } from '../../print-api/documents/base64.ts'
import type { Document } from '../../protocol/document.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { Page } from '../../protocol/pagination.ts'
import {
  CreatePrintJobBody,
  CreatePrintJobFromBase64Body,
  CreatePrintJobFromUrlBody,
  ListPrintJobsQuery,
  PrintJob,
  PrintJobIdParams,
  type PrintOptions,
  printOptionsOf,
} from '../../protocol/print-job.ts'
import type { DocumentIntake, DocumentWithJob } from '../documents/intake.ts'
import { fetchPublicDocument, type SafeFetchOptions } from '../fetch/safe-fetch.ts'
import { parseDocumentUrl } from '../fetch/url-policy.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { authOf } from '../plugins/authentication.ts'
import { cancelPrintJob } from '../print-jobs/cancel.ts'
import type { JobEvents } from '../print-jobs/job-events.ts'
import { JobLifecycle } from '../print-jobs/lifecycle.ts'
import type { PrintJobSubmitter } from '../print-jobs/submit.ts'
import type { JobPrinter } from '../storage/printers.ts'
import type { Storage } from '../storage/storage.ts'
import { unknownCursor } from './list-errors.ts'

export interface PrintJobRoutesOptions {
  jobEvents: JobEvents
  storage: Storage
  intake: DocumentIntake
  submitter: PrintJobSubmitter
  fetchOptions: SafeFetchOptions
  maxDocumentBytes: number
}

const CreateHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Retries with the same key return the original answer for 24 hours (spec: Limits).',
    }),
  ),
})
/** The order of checks (docs/printing-api.md), told to clients on each create operation. */
const CREATE_CHECKS =
  'Checks run in this order: a malformed request (bad JSON, `document_base64` that is not Base64 or has a ' +
  '`data:` prefix, a malformed or non-public `document_url`) is a 400; then the fields and references (an ' +
  'unknown `printer_id` or `document_id`) are a 422 naming each in `details.fields`; then the document itself ' +
  '(413, 415, 422); then options the printer cannot do (a dpi it lacks, media outside its ranges, colour or duplex ' +
  'where it has none) are a 422 naming each; then a format or raw language it cannot take is a 409 ' +
  '`unsupported_print_route` with `details.reason`; then a full queue is a 409 `print_queue_full`. ' +
  '`default` and null options always pass. A RAW payload is sent as it is: the options that only shape ' +
  'rendering (media, dpi, scale_mode, orientation, offsets, margins) are ignored for it, and the job shows ' +
  'what was asked.'
const createResponses = {
  201: jsonResponse('The job, created `pending`: poll it until printed, failed or cancelled.', PrintJob),
  '4xx': ErrorBody,
  '5xx': ErrorBody,
}

/** A field of a request body that has not been validated yet, if it is a string. */
function textField(request: FastifyRequest, name: string): string | undefined {
  const body = request.body
  if (body === null || typeof body !== 'object') return undefined
  const value = (body as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * The print-job endpoints of the spec (Endpoints → Print jobs). Every create endpoint checks in one order
 * (docs/printing-api.md, "order of checks"): a malformed document (Base64, URL) is a 400 before anything else, judged in
 * `preValidation`, ahead of the schema; then fields and references (422), the printer before any fetch of
 * the document; then the document's content; then the printer's capabilities (422) and the route (409);
 * then the queue (409).
 */
export const printJobRoutes: FastifyPluginAsync<PrintJobRoutesOptions> = async (app, opts) => {
  const { storage, intake, submitter, fetchOptions, maxDocumentBytes, jobEvents } = opts
  /** document_base64, decoded once by the create endpoint's preValidation hook. */
  const decoded = new WeakMap<FastifyRequest, Buffer>()
  const lifecycle = new JobLifecycle(storage.printJobs, app.log)
  /** The job of a create request, under the request's Idempotency-Key and logged with its request id. */
  const create = (
    request: FastifyRequest,
    printer: JobPrinter,
    document: Document,
    body: PrintOptions,
    content?: Buffer,
    storeWithJob?: DocumentWithJob,
  ) =>
    submitter.submit(
      authOf(request).accountId,
      printer,
      document,
      printOptionsOf(body),
      request.log,
      request.idempotencyScope,
      request.idempotencyFingerprint,
      content,
      storeWithJob,
    )
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  const writeConfig = { scopes: ['print_jobs:write' as const], idempotent: true }
  const documentConfig = {
    scopes: ['documents:write' as const, 'print_jobs:write' as const],
    idempotent: true,
  }

  api.post(
    '/api/v1/print-jobs',
    {
      config: writeConfig,
      schema: {
        operationId: 'createPrintJob',
        description: CREATE_CHECKS,
        tags: ['Print jobs'],
        summary: 'Print an uploaded document',
        headers: CreateHeaders,
        body: CreatePrintJobBody,
        response: createResponses,
      },
    },
    async (request, reply) => {
      const { accountId } = authOf(request)
      const { printer_id, document_id } = request.body
      const { printer, document, content } = await submitter.referencesFor(accountId, printer_id, document_id)
      // An uploaded document kept in its row goes with the offer, as the bytes of a from-base64 job do.
      return reply.code(201).send(await create(request, printer, document, request.body, content))
    },
  )

  api.post(
    '/api/v1/print-jobs/from-url',
    {
      config: documentConfig,
      schema: {
        operationId: 'createPrintJobFromUrl',
        description: CREATE_CHECKS,
        tags: ['Print jobs'],
        summary: 'Fetch a public HTTPS document and print it',
        headers: CreateHeaders,
        body: CreatePrintJobFromUrlBody,
        response: createResponses,
      },
      preValidation: async (request) => {
        const url = textField(request, 'document_url')
        if (url !== undefined) parseDocumentUrl(url)
      },
    },
    async (request, reply) => {
      const { accountId } = authOf(request)
      const body = request.body
      const printer = await submitter.printerFor(accountId, body.printer_id)
      const fetched = await fetchPublicDocument(body.document_url, fetchOptions)
      const { document, storeWithJob } = await intake.ingestForJob(accountId, fetched.bytes, {
        format: body.document_format,
        rawLanguage: body.document_raw_language,
        filename: body.document_filename ?? fetched.filename,
      })
      return reply.code(201).send(await create(request, printer, document, body, fetched.bytes, storeWithJob))
    },
  )

  api.post(
    '/api/v1/print-jobs/from-base64',
    {
      config: documentConfig,
      bodyLimit: Math.ceil(maxDocumentBytes / 3) * 4 + 64 * 1024,
      schema: {
        operationId: 'createPrintJobFromBase64',
        description: CREATE_CHECKS,
        tags: ['Print jobs'],
        summary: 'Print a small document given as Base64',
        headers: CreateHeaders,
        body: CreatePrintJobFromBase64Body,
        response: createResponses,
      },
      preValidation: async (request) => {
        const text = textField(request, 'document_base64')
        if (text !== undefined) decoded.set(request, decodeDocumentBase64(text, maxDocumentBytes))
      },
    },
    async (request, reply) => {
      const { accountId } = authOf(request)
      const body = request.body
      const printer = await submitter.printerFor(accountId, body.printer_id)
      const bytes = decoded.get(request) ?? decodeDocumentBase64(body.document_base64, maxDocumentBytes)
      const { document, storeWithJob } = await intake.ingestForJob(accountId, bytes, {
        format: body.document_format,
        rawLanguage: body.document_raw_language,
        filename: body.document_filename,
      })
      return reply.code(201).send(await create(request, printer, document, body, bytes, storeWithJob))
    },
  )

  api.get(
    '/api/v1/print-jobs/:printJobId',
    {
      config: { scopes: ['print_jobs:read'] },
      schema: {
        operationId: 'getPrintJob',
        tags: ['Print jobs'],
        summary: 'Get a print job (poll until printed, failed or cancelled)',
        params: PrintJobIdParams,
        response: { 200: jsonResponse('The print job.', PrintJob), '4xx': ErrorBody },
      },
    },
    async (request) => {
      const job = await storage.printJobs.findById(authOf(request).accountId, request.params.printJobId)
      if (!job) throw new ApiError('print_job_not_found', 'No such print job.')
      return job
    },
  )

  api.post(
    '/api/v1/print-jobs/:printJobId/cancel',
    {
      config: { scopes: ['print_jobs:write'] },
      schema: {
        operationId: 'cancelPrintJob',
        tags: ['Print jobs'],
        summary: 'Cancel a job that has not started printing (pending or reserved)',
        description:
          '200: the job is cancelled and none of it reached the printer. 202: its hub has not answered yet ' +
          '(offline or busy); the cancel stays requested, and the job ends `cancelled` if the hub drops it, ' +
          'or `printed`/`failed` if it had already started: poll it. 409: the job is printing or finished.',
        params: PrintJobIdParams,
        response: {
          200: jsonResponse('Cancelled: none of the job reached the printer.', PrintJob),
          202: jsonResponse(
            'The cancel is requested; the hub has not confirmed it yet. Poll the job.',
            PrintJob,
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { outcome, job } = await cancelPrintJob(
        { jobs: storage.printJobs, lifecycle, jobEvents },
        authOf(request).accountId,
        request.params.printJobId,
        request.log,
      )
      return reply.code(outcome === 'cancelled' ? 200 : 202).send(job)
    },
  )

  api.get(
    '/api/v1/print-jobs',
    {
      config: { scopes: ['print_jobs:read'] },
      schema: {
        operationId: 'listPrintJobs',
        tags: ['Print jobs'],
        summary: 'List recent print jobs, newest first, optionally by status and printer',
        querystring: ListPrintJobsQuery,
        response: {
          200: jsonResponse('A page of print jobs, newest first.', Page(PrintJob, 'PrintJobPage')),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      const { limit = 50, cursor, status, printer_id } = request.query
      const filter = { ...(status && { status }), ...(printer_id && { printer_id }) }
      return (
        (await storage.printJobs.list(authOf(request).accountId, limit, cursor, filter)) ?? unknownCursor()
      )
    },
  )
}

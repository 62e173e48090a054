import formbody from '@fastify/formbody'
import multipart from '@fastify/multipart'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyRequest,
} from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { BEARER, requireScopes, unauthorized } from '../../print-api/bearer-auth.ts'
import { decodeDocumentBase64 } from '../../print-api/documents/base64.ts'
import { readUploadForm } from '../../print-api/documents/upload-form.ts'
import { errorHandlerPlugin, sendError, toApiError } from '../../print-api/error-handler.ts'
import {
  BASIC_CHALLENGE,
  clientCredentials,
  invalidRequest,
  malformed,
} from '../../print-api/oauth-client-credentials.ts'
import { requestFingerprint } from '../../print-api/request-fingerprint.ts'
import { requestIdFor, requestIdPlugin } from '../../print-api/request-id.ts'
import { resolveOptions } from '../../print-api/route-check.ts'
import { unknownReferences } from '../../print-api/unknown-references.ts'
import { createValidatorCompiler } from '../../print-api/validation.ts'
import type { Document } from '../../protocol/document.ts'
import type { Scope } from '../../protocol/enums.ts'
import type { JobIdempotency } from '../../protocol/hub-messages.ts'
import { TokenRequest } from '../../protocol/oauth.ts'
import { ListQuery } from '../../protocol/pagination.ts'
import {
  CreatePrintJobBody,
  CreatePrintJobFromBase64Body,
  PrintJobIdParams,
  type PrintOptions,
} from '../../protocol/print-job.ts'
import type { LanCredentials, LanRefusal } from './lan-credentials.ts'
import { lanJobView } from './lan-job-view.ts'
import { documentOf, type LanJobs, type LanPrinter } from './lan-jobs.ts'

export interface LanApiOptions {
  jobs: LanJobs
  credentials: Pick<LanCredentials, 'verifyBearer' | 'issueToken'>
  maxDocumentBytes: number
  logger?: FastifyBaseLogger
  /** TLS for the server (lan-certificate.ts); plain HTTP without it (tests of the routes alone). */
  https?: { key: string; cert: string }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The API client a LAN request is from (lan-api.ts). */
    lanClient: { clientId: string; scopes: Scope[] } | null
  }
}

const CreateHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
})

const REFUSED: Record<LanRefusal, string> = {
  invalid_token: 'unknown or malformed',
  expired: 'expired',
  unknown_client: 'its API client is revoked or unknown',
  stale: 'this hub has not reached the cloud for too long to check credentials',
}

/**
 * The print part of the API, as a hub serves it on its LAN (docs/lan-printing.md): the same paths, bodies,
 * status codes, error bodies, limits and Idempotency-Key rules as the cloud's (print-api/ holds what both run),
 * for this hub's printers and the jobs it holds, with the account's API clients' credentials checked offline
 * (lan-credentials.ts). Idempotency-Keys are kept with the jobs in the spool, shared with the cloud's offers,
 * so a request sent to the cloud and again here with the same key is one job.
 */
export async function buildLanApi(options: LanApiOptions): Promise<FastifyInstance> {
  const { jobs, credentials, maxDocumentBytes } = options
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    ...(options.https && { https: { ...options.https, minVersion: 'TLSv1.2' as const } }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    routerOptions: { maxParamLength: 1000 },
    bodyLimit: 1024 * 1024,
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id)
      return sendError(reply, toApiError(error, request))
    },
  })
  app.setValidatorCompiler(createValidatorCompiler())
  app.removeContentTypeParser('text/plain')
  await app.register(requestIdPlugin)
  await app.register(errorHandlerPlugin)
  app.decorateRequest('lanClient', null)
  app.addHook('onRequest', async (request) => {
    const required = request.routeOptions.config.scopes
    if (required === undefined) return
    const header = request.headers.authorization
    if (header === undefined || header.trim() === '') throw unauthorized(null)
    const token = BEARER.exec(header)?.[1]
    if (!token) throw unauthorized('malformed')
    const checked = await credentials.verifyBearer(token, Date.now())
    if ('refused' in checked) throw unauthorized(REFUSED[checked.refused])
    requireScopes(checked, required)
    request.lanClient = checked
  })
  const clientOf = (request: FastifyRequest) => {
    if (!request.lanClient) throw new Error('route has no scopes')
    return request.lanClient
  }
  /** The key and fingerprint of a create request, or undefined without a key (as the cloud scopes them). */
  const keyOf = (request: FastifyRequest): JobIdempotency | undefined => {
    const key = request.headers['idempotency-key']
    if (typeof key !== 'string') return undefined
    return { endpoint: request.routeOptions.url ?? '', key, fingerprint: requestFingerprint(request) }
  }
  /** A key already used on this hub: its job (the same request, a replay), or a 409 (another request). */
  const replay = (idempotency: JobIdempotency | undefined) => {
    const held = idempotency && jobs.held(idempotency)
    if (!held) return undefined
    if (held.fingerprint !== idempotency.fingerprint) throw keyConflict()
    return held.job
  }
  const create = (
    request: FastifyRequest,
    printer: LanPrinter,
    document: Document,
    body: PrintOptions,
    idempotency: JobIdempotency | undefined,
  ) => {
    const taken = jobs.createJob({
      printerId: printer.printer_id,
      document,
      options: resolveOptions(body),
      clientId: clientOf(request).clientId,
      ...(idempotency && { idempotency }),
    })
    if (taken.outcome === 'conflict') throw keyConflict()
    return taken
  }
  const printerOf = (printerId: string) => {
    const printer = jobs.printer(printerId)
    if (!printer) throw unknownReferences('printer_id')
    return printer
  }
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  /** document_base64, decoded once by the create endpoint's preValidation hook (as the cloud's route does). */
  const decoded = new WeakMap<FastifyRequest, Buffer>()

  const tokenRoutes: FastifyPluginAsync = async (tokens) => {
    await tokens.register(formbody)
    tokens.post(
      '/oauth/token',
      { attachValidation: true, schema: { body: TokenRequest } },
      async (request) => {
        const contentType = request.headers['content-type'] ?? ''
        if (!/^application\/x-www-form-urlencoded\b/i.test(contentType) || malformed(request))
          throw invalidRequest(
            'Send an application/x-www-form-urlencoded body with grant_type=client_credentials.',
          )
        const body = (request.body ?? {}) as Record<string, unknown>
        const given = clientCredentials(request, body)
        if (given === null)
          throw new ApiError(
            'invalid_client',
            'Client authentication is required.',
            undefined,
            BASIC_CHALLENGE,
          )
        if (body.grant_type === undefined) throw invalidRequest('grant_type is required.')
        if (body.grant_type !== 'client_credentials')
          throw new ApiError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
        if (body.scope !== undefined && typeof body.scope !== 'string')
          throw invalidRequest('scope must be given once.')
        const grant = await credentials.issueToken(given.clientId, given.clientSecret, body.scope, Date.now())
        if ('refused' in grant) {
          if (grant.refused === 'invalid_scope')
            throw new ApiError('invalid_scope', 'The client may not have the scopes asked for.')
          throw new ApiError('invalid_client', 'Client authentication failed.', undefined, BASIC_CHALLENGE)
        }
        return grant
      },
    )
  }
  await app.register(tokenRoutes)

  api.get(
    '/api/v1/printers',
    { config: { scopes: ['printers:read'] }, schema: { querystring: ListQuery } },
    async (request) => {
      const { limit = 50, cursor } = request.query
      const printers = jobs.printers()
      const from = cursor === undefined ? 0 : printers.findIndex((p) => p.printer_id === cursor) + 1
      if (cursor !== undefined && from === 0)
        throw new ApiError('validation_failed', 'Invalid cursor.', {
          fields: [
            { field: 'cursor', message: 'does not name an item of this list', location: 'querystring' },
          ],
        })
      const page = printers.slice(from, from + limit)
      const last = page.at(-1)
      return {
        data: page.map(({ printer_key: _key, ...printer }) => printer),
        next_cursor: last && from + limit < printers.length ? last.printer_id : null,
      }
    },
  )

  await app.register(multipart)
  api.post(
    '/api/v1/documents',
    { config: { scopes: ['documents:write'] }, validatorCompiler: () => () => true },
    async (request, reply) => {
      const { bytes, declared } = await readUploadForm(request, maxDocumentBytes)
      const kept = await jobs.storeDocument(bytes, declared, clientOf(request).clientId)
      return reply.code(201).send(documentOf(kept))
    },
  )

  api.post(
    '/api/v1/print-jobs',
    {
      config: { scopes: ['print_jobs:write'] },
      schema: { headers: CreateHeaders, body: CreatePrintJobBody },
    },
    async (request, reply) => {
      const idempotency = keyOf(request)
      const replayed = replay(idempotency)
      if (replayed) return reply.code(201).header('idempotent-replayed', 'true').send(lanJobView(replayed))
      const { printer_id, document_id } = request.body
      const printer = jobs.printer(printer_id)
      const document = jobs.document(document_id)
      if (!printer || !document)
        throw unknownReferences(
          ...(!printer ? ['printer_id' as const] : []),
          ...(!document ? ['document_id' as const] : []),
        )
      const taken = create(request, printer, document, request.body, idempotency)
      return answerTaken(reply, taken)
    },
  )

  api.post(
    '/api/v1/print-jobs/from-base64',
    {
      config: { scopes: ['documents:write', 'print_jobs:write'] },
      bodyLimit: Math.ceil(maxDocumentBytes / 3) * 4 + 64 * 1024,
      schema: { headers: CreateHeaders, body: CreatePrintJobFromBase64Body },
      preValidation: async (request) => {
        const body = request.body as Record<string, unknown> | null
        const text = body && typeof body === 'object' ? body.document_base64 : undefined
        if (typeof text === 'string') decoded.set(request, decodeDocumentBase64(text, maxDocumentBytes))
      },
    },
    async (request, reply) => {
      const idempotency = keyOf(request)
      const replayed = replay(idempotency)
      if (replayed) return reply.code(201).header('idempotent-replayed', 'true').send(lanJobView(replayed))
      const body = request.body
      const printer = printerOf(body.printer_id)
      const bytes = decoded.get(request) ?? decodeDocumentBase64(body.document_base64, maxDocumentBytes)
      const kept = await jobs.storeDocument(
        bytes,
        {
          format: body.document_format,
          rawLanguage: body.document_raw_language,
          filename: body.document_filename,
        },
        clientOf(request).clientId,
      )
      const taken = create(request, printer, documentOf(kept), body, idempotency)
      return answerTaken(reply, taken)
    },
  )

  api.get(
    '/api/v1/print-jobs/:printJobId',
    { config: { scopes: ['print_jobs:read'] }, schema: { params: PrintJobIdParams } },
    async (request) => {
      const job = jobs.job(request.params.printJobId)
      if (!job) throw new ApiError('print_job_not_found', 'No such print job.')
      return lanJobView(job)
    },
  )

  api.post(
    '/api/v1/print-jobs/:printJobId/cancel',
    { config: { scopes: ['print_jobs:write'] }, schema: { params: PrintJobIdParams } },
    async (request) => {
      const id = request.params.printJobId
      const state = jobs.cancel(id)
      const job = jobs.job(id)
      if (state === undefined || !job) throw new ApiError('print_job_not_found', 'No such print job.')
      if (state !== 'cancelled' || job.state !== 'cancelled') {
        const view = lanJobView(job)
        throw new ApiError(
          'print_job_not_cancellable',
          `The job is ${view.status}: only a job that has not started can be cancelled.`,
          { status: view.status },
        )
      }
      return lanJobView(job)
    },
  )
  return app
}

function answerTaken(reply: import('fastify').FastifyReply, taken: ReturnType<LanJobs['createJob']>) {
  if (taken.outcome === 'replayed') reply.header('idempotent-replayed', 'true')
  return reply.code(201).send(lanJobView(taken.job))
}

function keyConflict(): ApiError {
  return new ApiError(
    'idempotency_key_conflict',
    'This Idempotency-Key was already used with a different request.',
  )
}

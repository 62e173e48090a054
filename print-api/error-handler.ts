import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ERROR_CODES, type ErrorBody } from '../protocol/errors.ts'
import { AllowedMethods } from './allowed-methods.ts'
import { ApiError } from './api-error.ts'

interface FieldError {
  field: string
  message: string
  location: string | undefined
  uninformative?: boolean
}

/**
 * Turns Ajv errors into one entry per offending field, named by its path (`copies`, `margin_top_mm`). A
 * nullable field fails every branch of its `anyOf`; the entry keeps the message of the non-null branch.
 */
export function fieldErrors(error: FastifyError): FieldError[] {
  const context = error.validationContext
  const byField = new Map<string, FieldError>()
  for (const v of error.validation ?? []) {
    const params = v.params as Record<string, unknown>
    const extra = params.missingProperty ?? params.additionalProperty
    const pointer = v.instancePath.replace(/^\//, '').replaceAll('/', '.')
    const path = [pointer, extra].filter((part) => part !== undefined && part !== '').join('.')
    const field = path === '' ? (context ?? 'body') : path
    const uninformative = v.keyword === 'anyOf' || (v.keyword === 'type' && params.type === 'null')
    const message =
      params.additionalProperty !== undefined ? 'is not a known field' : (v.message ?? 'is invalid')
    const known = byField.get(field)
    if (!known || (known.uninformative && !uninformative)) {
      byField.set(field, { field, message, location: context, uninformative })
    }
  }
  return [...byField.values()].map(({ field, message, location }) => ({ field, message, location }))
}

/**
 * Maps any error to the spec's error body. The only place that writes an error response. `request`, when
 * given, lets a refused body say that it had no Content-Type at all.
 */
export function toApiError(error: FastifyError | ApiError | Error, request?: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error
  const fe = error as FastifyError
  if (fe.validation) {
    const fields = fieldErrors(fe)
    const names = [...new Set(fields.map((f) => f.field))]
    return new ApiError('validation_failed', `Invalid ${names.join(', ')}.`, { fields })
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new ApiError('document_too_large', 'The request body is too large.')
    // A 400, not a 415: the spec keeps 415 for a document type it does not print (Errors), and a client that
    // forgot the header must not take it for a bad document.
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      if (request && request.headers['content-type'] === undefined) {
        return new ApiError('unsupported_content_type', 'The request has a body but no Content-Type header.')
      }
      return new ApiError('unsupported_content_type', 'This endpoint does not take that Content-Type.')
  }
  const status = fe.statusCode ?? 500
  if (status === 404) return new ApiError('not_found', 'No such route.')
  if (status === 405) return new ApiError('method_not_allowed', 'Method not allowed.')
  if (status >= 400 && status < 500) return new ApiError('invalid_request', 'The request is malformed.')
  return new ApiError('internal_error', 'An unexpected error occurred.')
}

export function errorBody(error: ApiError): ErrorBody {
  const body: ErrorBody = {
    error: ERROR_CODES[error.code].error,
    error_code: error.code,
    message: error.message,
  }
  if (error.details !== undefined) body.details = error.details
  return body
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send(errorBody(error))
}

export const errorHandlerPlugin = fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const apiError = toApiError(error, request)
      if (apiError.status >= 500) request.log.error({ err: error }, 'request failed')
      else request.log.info({ error_code: apiError.code, status: apiError.status }, apiError.message)
      return sendError(reply, apiError)
    })
    const allowed = new AllowedMethods()
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) allowed.add(method, route.url)
    })
    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? ''
      const methods = allowed.for(path)
      if (methods.length > 0) {
        return sendError(
          reply,
          new ApiError(
            'method_not_allowed',
            `${path.slice(0, 200)} does not take ${request.method}; it takes ${methods.join(', ')}.`,
            { allowed_methods: methods },
            { allow: methods.join(', ') },
          ),
        )
      }
      return sendError(reply, new ApiError('not_found', `No route ${request.method} ${path.slice(0, 200)}.`))
    })
  },
  { name: 'error-handler' },
)

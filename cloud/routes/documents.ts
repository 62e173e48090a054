import type { MultipartFile } from '@fastify/multipart'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { ApiError } from '../../print-api/api-error.ts'
import { tooLarge } from '../../print-api/documents/document-checks.ts'
import { Document } from '../../protocol/document.ts'
import { DocumentFormat, RawLanguage } from '../../protocol/enums.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import type { DocumentIntake } from '../documents/intake.ts'
import { bareFilename } from '../fetch/filename.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { authOf } from '../plugins/authentication.ts'

/** The multipart fields of an upload; documented in OpenAPI, checked by hand since the body is a stream. */
const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'the document: a PDF, or a RAW payload' }),
  document_format: Type.Optional(DocumentFormat),
  document_raw_language: Type.Optional(RawLanguage),
})

const FIELD_SCHEMAS = {
  document_format: DocumentFormat,
  document_raw_language: RawLanguage,
} as const
type FieldName = keyof typeof FIELD_SCHEMAS

function invalidFields(fields: { field: string; message: string }[]): ApiError {
  return new ApiError('validation_failed', `Invalid ${fields.map((f) => f.field).join(', ')}.`, {
    fields: fields.map((f) => ({ ...f, location: 'body' })),
  })
}

/** POST /api/v1/documents (documents:write): a multipart upload with one `file` part. */
export const documentRoutes: FastifyPluginAsync<{
  intake: DocumentIntake
  maxDocumentBytes: number
}> = async (app, { intake, maxDocumentBytes }) => {
  app.post(
    '/api/v1/documents',
    {
      config: { scopes: ['documents:write'] },
      // The multipart body is read as a stream in the handler; the schema below documents it.
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'uploadDocument',
        tags: ['Documents'],
        summary: 'Upload a PDF or an explicit RAW payload; returns the document id',
        consumes: ['multipart/form-data'],
        body: UploadForm,
        response: {
          201: jsonResponse('The stored document; print it with POST /api/v1/print-jobs.', Document),
          '4xx': ErrorBody,
          '5xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) {
        throw new ApiError('unsupported_content_type', 'Upload the document as multipart/form-data.')
      }
      const fields: Partial<Record<FieldName, string>> = {}
      const problems: { field: string; message: string }[] = []
      let file: { bytes: Buffer; filename: string } | null = null
      try {
        for await (const part of request.parts({
          limits: { fileSize: maxDocumentBytes, files: 1, fields: 8 },
        })) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file')
              problems.push({ field: part.fieldname, message: 'is not a known field' })
            file = { bytes: await readFile(part, maxDocumentBytes), filename: part.filename }
          } else if (part.fieldname in FIELD_SCHEMAS) {
            const name = part.fieldname as FieldName
            if (typeof part.value !== 'string' || !Value.Check(FIELD_SCHEMAS[name], part.value)) {
              problems.push({ field: name, message: `must be one of ${FIELD_SCHEMAS[name].enum.join(', ')}` })
            } else fields[name] = part.value
          } else problems.push({ field: part.fieldname, message: 'is not a known field' })
        }
      } catch (error) {
        if (error instanceof ApiError || (error as { statusCode?: number }).statusCode !== undefined)
          throw error
        // busboy's own parse errors ("Unexpected end of form", "Malformed part header") carry no status.
        throw new ApiError('invalid_request', 'The multipart body is malformed.')
      }
      if (!file) problems.push({ field: 'file', message: 'is required' })
      if (problems.length > 0 || !file) throw invalidFields(problems)
      const document = await intake.ingest(authOf(request).accountId, file.bytes, {
        format: (fields.document_format as 'pdf' | 'raw' | undefined) ?? null,
        rawLanguage: (fields.document_raw_language as Document['document_raw_language'] | undefined) ?? null,
        filename: bareFilename(file.filename),
      })
      return reply.code(201).send(document)
    },
  )
}

async function readFile(part: MultipartFile, maxBytes: number): Promise<Buffer> {
  const bytes = await part.toBuffer().catch((error: { code?: string }) => {
    if (error.code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(maxBytes)
    throw error
  })
  return bytes
}

import type { FastifyPluginAsync } from 'fastify'
import { readUploadForm, UploadForm } from '../../print-api/documents/upload-form.ts'
import { Document } from '../../protocol/document.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import type { DocumentIntake } from '../documents/intake.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { authOf } from '../plugins/authentication.ts'

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
      const { bytes, declared } = await readUploadForm(request, maxDocumentBytes)
      const document = await intake.ingest(authOf(request).accountId, bytes, declared)
      return reply.code(201).send(document)
    },
  )
}

import type { MultipartFile } from '@fastify/multipart'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import type { Document } from '../../protocol/document.ts'
import { DocumentFormat, RawLanguage } from '../../protocol/enums.ts'
import { ApiError } from '../api-error.ts'
import type { DeclaredDocument } from './document-checks.ts'
import { tooLarge } from './document-checks.ts'
import { bareFilename } from './filename.ts'

/** The multipart fields of an upload; documented in OpenAPI, checked by hand since the body is a stream. */
export const UploadForm = Type.Object({
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

/**
 * POST /api/v1/documents' body (multipart/form-data with one `file` part and the optional declared format and
 * raw language), read and checked as the cloud and a hub's LAN API both answer it: the bytes, and what was
 * declared of them.
 */
export async function readUploadForm(
  request: FastifyRequest,
  maxDocumentBytes: number,
): Promise<{ bytes: Buffer; declared: DeclaredDocument }> {
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
    if (error instanceof ApiError || (error as { statusCode?: number }).statusCode !== undefined) throw error
    // busboy's own parse errors ("Unexpected end of form", "Malformed part header") carry no status.
    throw new ApiError('invalid_request', 'The multipart body is malformed.')
  }
  if (!file) problems.push({ field: 'file', message: 'is required' })
  if (problems.length > 0 || !file) throw invalidFields(problems)
  return {
    bytes: file.bytes,
    declared: {
      format: (fields.document_format as 'pdf' | 'raw' | undefined) ?? null,
      rawLanguage: (fields.document_raw_language as Document['document_raw_language'] | undefined) ?? null,
      filename: bareFilename(file.filename),
    },
  }
}

async function readFile(part: MultipartFile, maxBytes: number): Promise<Buffer> {
  return part.toBuffer().catch((error: { code?: string }) => {
    if (error.code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(maxBytes)
    throw error
  })
}

import { type Static, Type } from 'typebox'
import { DocumentFormat, RawLanguage } from './enums.ts'

/** A stored document (upload, or created by the URL and Base64 shortcuts). */
export const Document = Type.Object(
  {
    document_id: Type.String({ format: 'uuid' }),
    document_mime_type: Type.String(),
    document_format: DocumentFormat,
    document_raw_language: Type.Union([RawLanguage, Type.Null()]),
    size_bytes: Type.Integer({ minimum: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    filename: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Document', additionalProperties: false },
)
export type Document = Static<typeof Document>

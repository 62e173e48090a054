import { randomUUID } from 'node:crypto'
import type { Document } from '../../protocol/document.ts'
import type { DocumentFormat, RawLanguage } from '../../protocol/enums.ts'
import { ApiError } from '../errors.ts'
import type { BlobStore } from '../storage/blob-store.ts'
import type { Storage } from '../storage/storage.ts'
import type { PdfInspector } from './pdf-inspection.ts'
import { inspectRaw } from './raw-inspection/index.ts'
import { resolveDocumentType } from './sniff.ts'

export interface DeclaredDocument {
  format?: DocumentFormat | null
  rawLanguage?: RawLanguage | null
  filename?: string | null
}

/** Every way in (upload, URL, Base64) ends here: size, type, security inspection, then storage. */
export interface DocumentIntake {
  ingest(accountId: string, bytes: Buffer, declared: DeclaredDocument): Promise<Document>
}

export interface DocumentIntakeOptions {
  storage: Storage
  blobs: BlobStore
  pdfInspector: Pick<PdfInspector, 'inspect'>
  maxDocumentBytes: number
  /** Bytes of an account's retained documents (ACCOUNT_STORAGE_QUOTA_BYTES). */
  storageQuotaBytes: number
}

export function tooLarge(limitBytes: number): ApiError {
  return new ApiError('document_too_large', `The document exceeds ${limitBytes} bytes.`, {
    limit_bytes: limitBytes,
  })
}

function quotaExceeded(quotaBytes: number, usedBytes: number, documentBytes: number): ApiError {
  return new ApiError(
    'storage_quota_exceeded',
    `The account's documents would exceed its storage quota of ${quotaBytes} bytes.`,
    { quota_bytes: quotaBytes, used_bytes: usedBytes, document_bytes: documentBytes },
  )
}

export function createDocumentIntake({
  storage,
  blobs,
  pdfInspector,
  maxDocumentBytes,
  storageQuotaBytes,
}: DocumentIntakeOptions) {
  const checkQuota = async (accountId: string, size: number) => {
    const used = await storage.documents.retainedBytes(accountId)
    if (used + size > storageQuotaBytes) throw quotaExceeded(storageQuotaBytes, used, size)
  }
  return {
    async ingest(accountId, bytes, declared) {
      if (bytes.length > maxDocumentBytes) throw tooLarge(maxDocumentBytes)
      if (bytes.length === 0) {
        throw new ApiError('validation_failed', 'The document is empty.', {
          fields: [{ field: 'document', message: 'must not be empty' }],
        })
      }
      await checkQuota(accountId, bytes.length)
      const type = resolveDocumentType(bytes, { format: declared.format, rawLanguage: declared.rawLanguage })
      if (type.format === 'raw' && type.rawLanguage) inspectRaw(bytes, type.rawLanguage)
      let sha256: string
      if (type.format === 'pdf') {
        // Ghostscript reads a file: stage the bytes, inspect them, and keep them only if they pass.
        const staged = await blobs.stage(bytes)
        try {
          await pdfInspector.inspect(staged.tempPath, accountId)
          await blobs.keep(staged)
        } catch (error) {
          await blobs.discard(staged)
          throw error
        }
        sha256 = staged.sha256
      } else {
        sha256 = await blobs.put(bytes)
      }
      const document: Document = {
        document_id: randomUUID(),
        document_mime_type: type.mimeType,
        document_format: type.format,
        document_raw_language: type.rawLanguage,
        size_bytes: bytes.length,
        sha256,
        filename: declared.filename ?? null,
        created_at: new Date().toISOString(),
      }
      // Checked again with the insert: another upload of the account may have been stored meanwhile.
      if (!(await storage.documents.insertWithinQuota(accountId, document, storageQuotaBytes))) {
        const used = await storage.documents.retainedBytes(accountId)
        throw quotaExceeded(storageQuotaBytes, used, bytes.length)
      }
      return document
    },
  } satisfies DocumentIntake
}

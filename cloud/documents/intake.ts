import { ApiError } from '../../print-api/api-error.ts'
import { checkDocumentBytes, type DeclaredDocument } from '../../print-api/documents/document-checks.ts'
import type { PdfInspector } from '../../print-api/documents/pdf-inspection.ts'
import type { Document } from '../../protocol/document.ts'
import { OFFER_CONTENT_MAX_BYTES } from '../../protocol/hub-messages.ts'
import { type BlobStore, sha256Of } from '../storage/blob-store.ts'
import type { Storage } from '../storage/storage.ts'
import { timeOrderedUuid } from '../uuid.ts'

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
      const type = await checkDocumentBytes(bytes, declared, maxDocumentBytes, () =>
        checkQuota(accountId, bytes.length),
      )
      let sha256: string
      let content: Buffer | undefined
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
      } else if (bytes.length <= OFFER_CONTENT_MAX_BYTES) {
        // A small RAW document is kept in its row, in the insert's own transaction: no file and directories
        // written per job (docs/performance.md, "Small documents in their row").
        sha256 = sha256Of(bytes)
        content = bytes
      } else {
        sha256 = await blobs.put(bytes)
      }
      const document: Document = {
        document_id: timeOrderedUuid(),
        document_mime_type: type.mimeType,
        document_format: type.format,
        document_raw_language: type.rawLanguage,
        size_bytes: bytes.length,
        sha256,
        filename: declared.filename ?? null,
        created_at: new Date().toISOString(),
      }
      // Checked again with the insert: another upload of the account may have been stored meanwhile.
      if (!(await storage.documents.insertWithinQuota(accountId, document, storageQuotaBytes, content))) {
        const used = await storage.documents.retainedBytes(accountId)
        throw quotaExceeded(storageQuotaBytes, used, bytes.length)
      }
      return document
    },
  } satisfies DocumentIntake
}

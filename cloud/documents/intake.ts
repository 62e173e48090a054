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
  /**
   * As ingest, for a document given with its job (from-base64, from-url): one kept in its row (a small RAW
   * document) comes back checked but not stored, with `storeWithJob`: the job's insert stores it, in its own
   * transaction (JobCreation.document), and nothing is stored when the job is refused before it.
   */
  ingestForJob(
    accountId: string,
    bytes: Buffer,
    declared: DeclaredDocument,
  ): Promise<{ document: Document; storeWithJob?: DocumentWithJob }>
}

/** A checked document that its job's insert stores (JobCreation.document). */
export interface DocumentWithJob {
  content: Buffer
  quotaBytes: number
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

/** The 413 of a document its insert found over the quota, with the account's bytes as they are now. */
export async function quotaRefusal(
  storage: Storage,
  accountId: string,
  quotaBytes: number,
  documentBytes: number,
): Promise<ApiError> {
  return quotaExceeded(quotaBytes, await storage.documents.retainedBytes(accountId), documentBytes)
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
  /** The document checked, inspected, and its bytes stored unless they are to be kept in its row (`content`). */
  const checked = async (accountId: string, bytes: Buffer, declared: DeclaredDocument) => {
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
    return { document, content }
  }
  /** Stores a checked document within its account's quota. */
  const store = async (accountId: string, document: Document, content: Buffer | undefined) => {
    // Checked again with the insert: another upload of the account may have been stored meanwhile.
    if (!(await storage.documents.insertWithinQuota(accountId, document, storageQuotaBytes, content)))
      throw await quotaRefusal(storage, accountId, storageQuotaBytes, document.size_bytes)
    return document
  }
  return {
    async ingest(accountId, bytes, declared) {
      const { document, content } = await checked(accountId, bytes, declared)
      return store(accountId, document, content)
    },
    async ingestForJob(accountId, bytes, declared) {
      const { document, content } = await checked(accountId, bytes, declared)
      if (content) return { document, storeWithJob: { content, quotaBytes: storageQuotaBytes } }
      return { document: await store(accountId, document, content) }
    },
  } satisfies DocumentIntake
}

import type { Document } from '../../protocol/document.ts'
import { TERMINAL_PRINT_JOB_STATUSES } from '../../protocol/enums.ts'
import type { SqliteDatabase } from './database.ts'

/**
 * Documents and their retention. A purged document keeps its row, so that finished jobs still name it, but
 * its bytes are gone: it is no longer found, counts against no quota, and no job can be created on it.
 */
export interface DocumentRepository {
  /**
   * Inserts the document unless the account's retained documents would then pass `quotaBytes`; the check
   * and the insert are one transaction. When refused, returns false and queues the document's blob for
   * deletion unless another retained document names it.
   */
  insertWithinQuota(accountId: string, document: Document, quotaBytes: number): boolean
  /** A document that is not purged. */
  findById(accountId: string, documentId: string): Document | undefined
  /** The bytes of the account's documents that are not purged. */
  retainedBytes(accountId: string): number
  /**
   * Purges up to `limit` documents that no unfinished job needs and that nothing used since `cutoff` (ISO
   * time: not uploaded since, no job finished since), and queues the blobs that no retained document names
   * any more. One transaction; repeating it, or running it on several nodes, purges nothing twice.
   */
  purgeUnneeded(cutoff: string, at: string, limit: number): number
  /**
   * The queued blobs, oldest first, among the next `limit`, that no retained document names; those named
   * again leave the queue.
   */
  blobsToDelete(limit: number): string[]
  blobDeleted(sha256: string): void
}

/** The error SQLite raises when a job is inserted on a purged document (migration 6's trigger). */
export function isDocumentPurgedError(error: unknown): boolean {
  return error instanceof Error && error.message === 'document_purged'
}

interface DocumentRow {
  document_id: string
  mime_type: string
  format: Document['document_format']
  raw_language: Document['document_raw_language']
  size_bytes: number
  sha256: string
  filename: string | null
  created_at: string
}

interface PurgeCandidate {
  document_id: string
  account_id: string
  size_bytes: number
  sha256: string
}

const FINISHED = TERMINAL_PRINT_JOB_STATUSES.map((status) => `'${status}'`).join(', ')

export function createDocumentRepository(db: SqliteDatabase): DocumentRepository {
  const insert = db.prepare(
    `INSERT INTO documents (document_id, account_id, mime_type, format, raw_language, size_bytes, sha256, filename, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const byId = db.prepare<[string, string], DocumentRow>(
    'SELECT * FROM documents WHERE account_id = ? AND document_id = ? AND purged_at IS NULL',
  )
  const retained = db.prepare<[string], { retained_bytes: number }>(
    'SELECT retained_bytes FROM account_storage WHERE account_id = ?',
  )
  const addRetained = db.prepare(
    `INSERT INTO account_storage (account_id, retained_bytes) VALUES (?, ?)
     ON CONFLICT (account_id) DO UPDATE SET retained_bytes = retained_bytes + excluded.retained_bytes`,
  )
  const candidates = db.prepare<[{ cutoff: string; limit: number }], PurgeCandidate>(
    `SELECT document_id, account_id, size_bytes, sha256 FROM documents d
     WHERE purged_at IS NULL AND created_at < @cutoff
       AND NOT EXISTS (SELECT 1 FROM print_jobs j WHERE j.document_id = d.document_id
         AND (j.status NOT IN (${FINISHED}) OR coalesce(j.completed_at, j.created_at) >= @cutoff))
     ORDER BY created_at LIMIT @limit`,
  )
  const markPurged = db.prepare(
    'UPDATE documents SET purged_at = ? WHERE document_id = ? AND purged_at IS NULL',
  )
  const queueUnnamedBlob = db.prepare(
    `INSERT OR IGNORE INTO blob_deletions (sha256, queued_at) SELECT @sha256, @at
     WHERE NOT EXISTS (SELECT 1 FROM documents WHERE sha256 = @sha256 AND purged_at IS NULL)`,
  )
  // Oldest first by rowid (insertion order), so that a batch costs the same however long the queue is.
  const queuedBlobs = db.prepare<[number], { sha256: string; named: 0 | 1 }>(
    `SELECT sha256, EXISTS (SELECT 1 FROM documents d WHERE d.sha256 = b.sha256 AND d.purged_at IS NULL) AS named
     FROM blob_deletions b ORDER BY rowid LIMIT ?`,
  )
  const dequeueBlob = db.prepare('DELETE FROM blob_deletions WHERE sha256 = ?')

  const retainedBytes = (accountId: string) => retained.get(accountId)?.retained_bytes ?? 0
  const insertWithinQuota = db.transaction((accountId: string, d: Document, quotaBytes: number) => {
    if (retainedBytes(accountId) + d.size_bytes > quotaBytes) {
      queueUnnamedBlob.run({ sha256: d.sha256, at: new Date().toISOString() })
      return false
    }
    insert.run(
      d.document_id,
      accountId,
      d.document_mime_type,
      d.document_format,
      d.document_raw_language,
      d.size_bytes,
      d.sha256,
      d.filename,
      d.created_at,
    )
    addRetained.run(accountId, d.size_bytes)
    return true
  })
  const purgeUnneeded = db.transaction((cutoff: string, at: string, limit: number) => {
    let purged = 0
    for (const document of candidates.all({ cutoff, limit })) {
      if (markPurged.run(at, document.document_id).changes !== 1) continue
      addRetained.run(document.account_id, -document.size_bytes)
      queueUnnamedBlob.run({ sha256: document.sha256, at })
      purged += 1
    }
    return purged
  })
  const blobsToDelete = db.transaction((limit: number) => {
    const queued = queuedBlobs.all(limit)
    for (const blob of queued) if (blob.named) dequeueBlob.run(blob.sha256)
    return queued.filter((blob) => !blob.named).map((blob) => blob.sha256)
  })
  return {
    insertWithinQuota: (accountId, document, quotaBytes) =>
      insertWithinQuota.immediate(accountId, document, quotaBytes),
    findById(accountId, documentId) {
      const row = byId.get(accountId, documentId)
      return (
        row && {
          document_id: row.document_id,
          document_mime_type: row.mime_type,
          document_format: row.format,
          document_raw_language: row.raw_language,
          size_bytes: row.size_bytes,
          sha256: row.sha256,
          filename: row.filename,
          created_at: row.created_at,
        }
      )
    },
    retainedBytes,
    purgeUnneeded: (cutoff, at, limit) => purgeUnneeded.immediate(cutoff, at, limit),
    blobsToDelete: (limit) => blobsToDelete.immediate(limit),
    blobDeleted(sha256) {
      dequeueBlob.run(sha256)
    },
  }
}

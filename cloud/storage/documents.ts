import type { ExpressionBuilder, Kysely } from 'kysely'
import type { Document } from '../../protocol/document.ts'
import { TERMINAL_PRINT_JOB_STATUSES } from '../../protocol/enums.ts'
import { batchedLookup, batchedOn } from './batched.ts'
import {
  compareText,
  type DocumentInsert,
  documentStatements,
  inAccountOrder,
  insertCounted,
} from './document-inserts.ts'
import { affected, inTransaction, type Sql } from './engine.ts'
import type { Database } from './schema.ts'

/**
 * Documents and their retention. A purged document keeps its row, so that finished jobs still name it, but
 * its bytes are gone: it is no longer found, counts against no quota, and no job can be created on it.
 */
export interface DocumentRepository {
  /**
   * Inserts the document unless the account's retained documents would then pass `quotaBytes`; the check
   * and the insert are one transaction. When refused, returns false and queues the document's blob for
   * deletion unless another retained document names it. `content`: the bytes of a small document kept in its
   * row instead of the blob store (migration 24).
   */
  insertWithinQuota(
    accountId: string,
    document: Document,
    quotaBytes: number,
    content?: Buffer,
  ): Promise<boolean>
  /** A document that is not purged. */
  findById(accountId: string, documentId: string): Promise<Document | undefined>
  /**
   * A document that is not purged, and its bytes when its row keeps them (a small RAW document, migration 24;
   * undefined when they are a file of the blob store).
   */
  findWithContent(
    accountId: string,
    documentId: string,
  ): Promise<{ document: Document; content: Buffer | undefined } | undefined>
  /** The bytes of the account's documents that are not purged. */
  retainedBytes(accountId: string): Promise<number>
  /**
   * Purges up to `limit` documents that no unfinished job needs and that nothing used since `cutoff` (ISO
   * time: not uploaded since, no job finished since), and queues the blobs that no retained document names
   * any more. One transaction; repeating it, or running it on several nodes, purges nothing twice.
   */
  purgeUnneeded(cutoff: string, at: string, limit: number): Promise<number>
  /**
   * The queued blobs, oldest first, among the next `limit`, that no retained document names; those named
   * again leave the queue.
   */
  blobsToDelete(limit: number): Promise<string[]>
  blobDeleted(sha256: string): Promise<void>
}

/** The error the database raises when a job is inserted on a purged document (migration 6's trigger). */
export function isDocumentPurgedError(error: unknown): boolean {
  return error instanceof Error && error.message === 'document_purged'
}

const FINISHED = [...TERMINAL_PRINT_JOB_STATUSES]

/** Documents per transaction at most. */
const MAX_DOCUMENT_BATCH = 128

export function createDocumentRepository(sql: Sql): DocumentRepository {
  const { db } = sql
  const documentById = batchedLookup(sql, {
    select: (documentIds: readonly string[]) =>
      db
        .selectFrom('documents')
        .selectAll()
        .where('document_id', 'in', documentIds)
        .where('purged_at', 'is', null),
    keyOfRow: (row) => row.document_id,
  })
  const findWithContent = async (accountId: string, documentId: string) => {
    const row = await documentById(documentId)
    if (row?.account_id !== accountId) return undefined
    const document: Document = {
      document_id: row.document_id,
      document_mime_type: row.mime_type,
      document_format: row.format as Document['document_format'],
      document_raw_language: row.raw_language as Document['document_raw_language'],
      size_bytes: row.size_bytes,
      sha256: row.sha256,
      filename: row.filename,
      created_at: row.created_at,
    }
    return { document, content: row.content ?? undefined }
  }
  const statements = documentStatements(db)
  const retainedBytes = async (accountId: string) =>
    (await statements.retainedBytes(db, '', accountId)).rows[0]?.retained_bytes ?? 0
  /** Queues the blob for deletion unless a retained document names it. */
  const queueUnnamedBlob = async (on: Kysely<Database>, sha256: string, at: string) => {
    const named = await on
      .selectFrom('documents')
      .select('document_id')
      .where('sha256', '=', sha256)
      .where('purged_at', 'is', null)
      .limit(1)
      .executeTakeFirst()
    if (named) return
    await on
      .insertInto('blob_deletions')
      .values({ sha256, queued_at: at })
      .onConflict((conflict) => conflict.doNothing())
      .execute()
  }
  /** No unfinished job needs the document, and none finished (or was created) since `cutoff`. */
  const unneeded = (cutoff: string) => (eb: ExpressionBuilder<Database, 'documents'>) =>
    eb.not(
      eb.exists(
        eb
          .selectFrom('print_jobs as j')
          .select('j.document_id')
          .whereRef('j.document_id', '=', 'documents.document_id')
          .where((job) =>
            job.or([
              job('j.status', 'not in', FINISHED),
              job(job.fn.coalesce('j.completed_at', 'j.created_at'), '>=', cutoff),
            ]),
          ),
      ),
    )
  /** One document, within a transaction; a refused one's file is queued for deletion unless named. */
  const insertOne = async (tx: Kysely<Database>, insert: DocumentInsert) => {
    if (await insertCounted(tx, statements, insert)) return true
    // A document kept in its row wrote no file.
    if (!insert.content) await queueUnnamedBlob(tx, insert.document.sha256, new Date().toISOString())
    return false
  }
  /**
   * The documents asked together (batched.ts) in one transaction: on SQLite a commit for many instead of one
   * each (a create through from-base64 wrote two transactions a job, its document's and its own). Each account's
   * documents are counted in the order they were asked; the accounts are taken in one order, so that on
   * PostgreSQL two batches lock their `account_storage` rows in the same order and wait instead of deadlocking.
   */
  const insertWithinQuota = batchedOn(
    sql,
    (items: readonly DocumentInsert[]) =>
      inTransaction(sql, async ({ db: tx }) => {
        const answers: boolean[] = new Array(items.length)
        for (const index of inAccountOrder(items)) answers[index] = await insertOne(tx, items[index]!)
        return answers
      }),
    { maxBatch: MAX_DOCUMENT_BATCH },
  )
  return {
    insertWithinQuota: (accountId, document, quotaBytes, content) =>
      insertWithinQuota({ accountId, document, quotaBytes, content }),
    async findById(accountId, documentId) {
      return (await findWithContent(accountId, documentId))?.document
    },
    findWithContent,
    retainedBytes: (accountId) => retainedBytes(accountId),
    purgeUnneeded: (cutoff, at, limit) =>
      inTransaction(sql, async (tx) => {
        // PostgreSQL: rows another node is purging (or a job insert holds) are skipped, not waited for.
        let candidates = tx.db
          .selectFrom('documents')
          .select(['document_id', 'account_id', 'size_bytes', 'sha256'])
          .select((eb) => eb('content', 'is not', null).as('in_row'))
          .where('purged_at', 'is', null)
          .where('created_at', '<', cutoff)
          .where(unneeded(cutoff))
          .orderBy('created_at')
          .limit(limit)
        if (tx.engine === 'postgres') candidates = candidates.forUpdate().skipLocked()
        let purged = 0
        // By account: each account's `account_storage` row is locked in the order documents are inserted in
        // (insertWithinQuota), so that a purge and a batch of inserts wait for each other instead of deadlocking.
        const byAccount = (await candidates.execute()).sort((a, b) => compareText(a.account_id, b.account_id))
        for (const document of byAccount) {
          // Checked again in a statement of its own: on PostgreSQL it sees a job committed meanwhile.
          const marked = await tx.db
            .updateTable('documents')
            .set({ purged_at: at, content: null })
            .where('document_id', '=', document.document_id)
            .where('purged_at', 'is', null)
            .where(unneeded(cutoff))
            .executeTakeFirst()
          if (affected(marked) !== 1) continue
          await tx.db
            .updateTable('account_storage')
            .set((eb) => ({ retained_bytes: eb('retained_bytes', '-', document.size_bytes) }))
            .where('account_id', '=', document.account_id)
            .execute()
          if (!document.in_row) await queueUnnamedBlob(tx.db, document.sha256, at)
          purged += 1
        }
        return purged
      }),
    blobsToDelete: (limit) =>
      inTransaction(sql, async ({ db: tx }) => {
        // Oldest first by an index, so that a batch costs the same however long the queue is.
        const queued = await tx
          .selectFrom('blob_deletions as b')
          .select((eb) => [
            'b.sha256',
            eb
              .exists(
                eb
                  .selectFrom('documents as d')
                  .select('d.document_id')
                  .whereRef('d.sha256', '=', 'b.sha256')
                  .where('d.purged_at', 'is', null),
              )
              .as('named'),
          ])
          .orderBy('b.queued_at')
          .orderBy('b.sha256')
          .limit(limit)
          .execute()
        const named = queued.filter((blob) => Boolean(blob.named)).map((blob) => blob.sha256)
        if (named.length > 0) await tx.deleteFrom('blob_deletions').where('sha256', 'in', named).execute()
        return queued.filter((blob) => !blob.named).map((blob) => blob.sha256)
      }),
    async blobDeleted(sha256) {
      await db.deleteFrom('blob_deletions').where('sha256', '=', sha256).execute()
    },
  }
}

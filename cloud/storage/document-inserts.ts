import type { Kysely } from 'kysely'
import type { Document } from '../../protocol/document.ts'
import type { Database } from './schema.ts'
import { type SlotOf, statementTemplates } from './statement-templates.ts'

/** A document to insert within its account's storage quota. */
export interface DocumentInsert {
  accountId: string
  document: Document
  quotaBytes: number
  /** The bytes of a small document kept in its row (migration 24); undefined when they are a blob's file. */
  content: Buffer | undefined
}

/** Code-unit order, the same on every node (Array.prototype.sort is stable: equal texts keep their order). */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The indexes of `items` by account, in the order asked within an account: on PostgreSQL every transaction
 * that counts documents takes its accounts' `account_storage` rows in this one order (so does the purge), so
 * that two of them wait for each other instead of deadlocking.
 */
export function inAccountOrder(items: readonly { accountId: string }[]): number[] {
  const order = items.map((_, index) => index)
  return order.sort((a, b) => compareText(items[a]!.accountId, items[b]!.accountId))
}

export type DocumentStatements = ReturnType<typeof documentStatements>

/**
 * One document, within a transaction: its account's bytes counted unless past the quota, then its row.
 * Returns false, having written nothing, when the quota refuses it.
 */
export async function insertCounted(
  tx: Kysely<Database>,
  statements: DocumentStatements,
  insert: DocumentInsert,
): Promise<boolean> {
  await statements.ensureStorageRow(tx, '', insert)
  // The quota check and the count are one conditional UPDATE: two uploads cannot both pass it.
  const counted = await statements.countBytes(tx, '', insert)
  if (counted.numAffectedRows !== 1n) return false
  await statements.insertRow(tx, '', insert)
  return true
}

/**
 * The statements every document's insert runs, built once (statement-templates.ts): built by Kysely per
 * document they were a fifth of a job's CPU in the cloud (docs/performance.md, "Job creation through the API").
 */
export function documentStatements(db: Kysely<Database>) {
  return {
    retainedBytes: statementTemplates((_: string, slot: SlotOf<string>) =>
      db
        .selectFrom('account_storage')
        .select('retained_bytes')
        .where(
          'account_id',
          '=',
          slot((accountId) => accountId),
        ),
    ),
    ensureStorageRow: statementTemplates((_: DocumentInsert, slot: SlotOf<DocumentInsert>) =>
      db
        .insertInto('account_storage')
        .values({ account_id: slot((insert) => insert.accountId), retained_bytes: 0 })
        .onConflict((conflict) => conflict.doNothing()),
    ),
    countBytes: statementTemplates((_: DocumentInsert, slot: SlotOf<DocumentInsert>) => {
      const size = slot((insert) => insert.document.size_bytes)
      return db
        .updateTable('account_storage')
        .set((eb) => ({ retained_bytes: eb('retained_bytes', '+', size) }))
        .where(
          'account_id',
          '=',
          slot((insert) => insert.accountId),
        )
        .where((eb) =>
          eb(
            eb('retained_bytes', '+', size),
            '<=',
            slot((insert) => insert.quotaBytes),
          ),
        )
    }),
    insertRow: statementTemplates((_: DocumentInsert, slot: SlotOf<DocumentInsert>) =>
      db.insertInto('documents').values({
        document_id: slot((insert) => insert.document.document_id),
        account_id: slot((insert) => insert.accountId),
        mime_type: slot((insert) => insert.document.document_mime_type),
        format: slot((insert) => insert.document.document_format),
        raw_language: slot((insert) => insert.document.document_raw_language),
        size_bytes: slot((insert) => insert.document.size_bytes),
        sha256: slot((insert) => insert.document.sha256),
        filename: slot((insert) => insert.document.filename),
        created_at: slot((insert) => insert.document.created_at),
        content: slot((insert) => insert.content ?? null),
      }),
    ),
  }
}

import type { Document } from '../../protocol/document.ts'
import type { SqliteDatabase } from './database.ts'

export interface DocumentRepository {
  insert(accountId: string, document: Document): void
  findById(accountId: string, documentId: string): Document | undefined
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

export function createDocumentRepository(db: SqliteDatabase): DocumentRepository {
  const insert = db.prepare(
    `INSERT INTO documents (document_id, account_id, mime_type, format, raw_language, size_bytes, sha256, filename, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const byId = db.prepare<[string, string], DocumentRow>(
    'SELECT * FROM documents WHERE account_id = ? AND document_id = ?',
  )
  return {
    insert(accountId, d) {
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
    },
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
  }
}

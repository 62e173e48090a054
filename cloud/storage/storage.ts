import path from 'node:path'
import { type AccountRepository, createAccountRepository } from './accounts.ts'
import { type AgentRepository, createAgentRepository } from './agents.ts'
import { type ApiClientRepository, createApiClientRepository } from './api-clients.ts'
import { openDatabase, type SqliteDatabase } from './database.ts'
import { createDocumentRepository, type DocumentRepository } from './documents.ts'
import { createEnrollmentRepository, type EnrollmentRepository } from './enrollments.ts'
import { createIdempotencyRepository, type IdempotencyRepository } from './idempotency.ts'
import { createPrintJobRepository, type PrintJobRepository } from './print-jobs.ts'
import { createPrinterRepository, type PrinterRepository } from './printers.ts'

/** Every repository the cloud uses. The rest of the cloud sees only these interfaces, never SQL. */
export interface Storage {
  accounts: AccountRepository
  apiClients: ApiClientRepository
  agents: AgentRepository
  printers: PrinterRepository
  documents: DocumentRepository
  enrollments: EnrollmentRepository
  printJobs: PrintJobRepository
  idempotency: IdempotencyRepository
  /** Whether the database answers a query now (readiness probe); false once closed or failing. */
  ping(): boolean
  /** Runs `work` as one transaction: several repositories' writes land together or not at all. */
  atomically<T>(work: () => T): T
  close(): void
}

export const DATABASE_FILE = 'cloud.sqlite'

export function openStorage(dataDir: string, busyTimeoutMs?: number): Storage {
  return storageOn(openDatabase(path.join(dataDir, DATABASE_FILE), undefined, busyTimeoutMs))
}

export function storageOn(db: SqliteDatabase): Storage {
  return {
    accounts: createAccountRepository(db),
    apiClients: createApiClientRepository(db),
    agents: createAgentRepository(db),
    printers: createPrinterRepository(db),
    documents: createDocumentRepository(db),
    enrollments: createEnrollmentRepository(db),
    printJobs: createPrintJobRepository(db),
    idempotency: createIdempotencyRepository(db),
    ping: () => {
      try {
        return db.prepare('SELECT 1 AS one').get() !== undefined
      } catch {
        return false
      }
    },
    atomically: (work) => db.transaction(work).immediate(),
    close: () => db.close(),
  }
}

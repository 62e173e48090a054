import path from 'node:path'
import { sql as rawSql } from 'kysely'
import { type AccountRepository, createAccountRepository } from './accounts.ts'
import { type AgentRepository, createAgentRepository } from './agents.ts'
import { type ApiClientRepository, createApiClientRepository } from './api-clients.ts'
import { type ApplicationRepository, createApplicationRepository } from './applications.ts'
import { type ConsoleSessionRepository, createConsoleSessionRepository } from './console-sessions.ts'
import { type DatabaseLocation, type OpenDatabase, openDatabase, type PoolStats } from './database.ts'
import { createDocumentRepository, type DocumentRepository } from './documents.ts'
import type { Engine, Sql } from './engine.ts'
import { createEnrollmentRepository, type EnrollmentRepository } from './enrollments.ts'
import { createFleetCountRepository, type FleetCountRepository } from './fleet-counts.ts'
import { createHubPresenceRepository, type HubPresenceRepository } from './hub-presence.ts'
import { createIdempotencyRepository, type IdempotencyRepository } from './idempotency.ts'
import { createManagedAccountRepository, type ManagedAccountRepository } from './managed-accounts.ts'
import { createPairingRepository, type PairingRepository } from './pairings.ts'
import { createPrintJobRepository, type PrintJobRepository } from './print-jobs.ts'
import { createPrinterRepository, type PrinterRepository } from './printers.ts'
import { createReleasePinRepository, type ReleasePinRepository } from './release-pins.ts'
import { createServedCatalogRepository, type ServedCatalogRepository } from './served-catalogs.ts'
import { createSignInFailureRepository, type SignInFailureRepository } from './sign-in-failures.ts'
import { createUserRepository, type UserRepository } from './users.ts'
import { createWebhookRepository, type WebhookRepository } from './webhooks.ts'

/** Every repository the cloud uses. The rest of the cloud sees only these interfaces, never SQL. */
export interface Storage {
  readonly engine: Engine
  accounts: AccountRepository
  apiClients: ApiClientRepository
  agents: AgentRepository
  hubPresence: HubPresenceRepository
  printers: PrinterRepository
  documents: DocumentRepository
  enrollments: EnrollmentRepository
  printJobs: PrintJobRepository
  idempotency: IdempotencyRepository
  releasePins: ReleasePinRepository
  servedCatalogs: ServedCatalogRepository
  applications: ApplicationRepository
  managedAccounts: ManagedAccountRepository
  pairings: PairingRepository
  users: UserRepository
  consoleSessions: ConsoleSessionRepository
  signInFailures: SignInFailureRepository
  fleetCounts: FleetCountRepository
  webhooks: WebhookRepository
  /** PostgreSQL: the connection pool's figures now; undefined on SQLite (one connection, no pool). */
  poolStats?(): PoolStats | undefined
  /** Whether the database answers a query now (readiness probe); false once closed or failing. */
  ping(): Promise<boolean>
  /**
   * Runs `work` as one transaction: every write it makes through `tx` (a Storage scoped to the transaction)
   * lands together, or none does when it throws. Use only `tx` inside: on SQLite the one connection is held
   * by the transaction, so a call through the outer storage would wait for it for ever. Within a transaction
   * `tx.atomically` runs its work in the same transaction.
   */
  atomically<T>(work: (tx: Storage) => Promise<T>): Promise<T>
  /**
   * Runs `work` unless another node runs the same periodic `task` now, so that several nodes on one database
   * take turns instead of racing (job expiry, re-offering, housekeeping); undefined when it was skipped. On
   * PostgreSQL a session advisory lock named by the task, held on a connection of its own while `work` runs
   * (a node that dies releases it with its connection); on SQLite it always runs: one cloud serves a DATA_DIR.
   */
  exclusively<T>(task: string, work: () => Promise<T>): Promise<T | undefined>
  close(): Promise<void>
}

export const DATABASE_FILE = 'cloud.sqlite'

export interface StorageSettings {
  /** Where the SQLite file lives when there is no `databaseUrl`. */
  dataDir: string
  /** `postgres://…`: every repository on PostgreSQL; empty or absent: SQLite in `dataDir`. */
  databaseUrl?: string
  busyTimeoutMs?: number
}

/** Where the settings put the database. */
export function databaseLocation(settings: StorageSettings): DatabaseLocation {
  return settings.databaseUrl
    ? { postgresUrl: settings.databaseUrl }
    : { sqliteFile: path.join(settings.dataDir, DATABASE_FILE) }
}

/** Opens the database the settings name (migrating it) and the repositories on it. */
export async function openStorage(settings: StorageSettings): Promise<Storage> {
  return storageOn(
    await openDatabase(databaseLocation(settings), {
      ...(settings.busyTimeoutMs !== undefined && { busyTimeoutMs: settings.busyTimeoutMs }),
    }),
  )
}

export function storageOn(database: OpenDatabase): Storage {
  let closed = false
  const storage = repositoriesOn(database)
  return {
    ...storage,
    async ping() {
      if (closed) return false
      try {
        await rawSql`SELECT 1`.execute(database.db)
        return true
      } catch {
        return false
      }
    },
    poolStats: () => database.poolStats?.(),
    exclusively: (task, work) => exclusively(database, task, work),
    atomically: (work) =>
      database.db.transaction().execute((tx) => work(scoped({ db: tx, engine: database.engine }))),
    async close() {
      if (closed) return
      closed = true
      await database.close()
    },
  }
}

function repositoriesOn(sql: Sql) {
  return {
    engine: sql.engine,
    accounts: createAccountRepository(sql),
    apiClients: createApiClientRepository(sql),
    agents: createAgentRepository(sql),
    hubPresence: createHubPresenceRepository(sql),
    printers: createPrinterRepository(sql),
    documents: createDocumentRepository(sql),
    enrollments: createEnrollmentRepository(sql),
    printJobs: createPrintJobRepository(sql),
    idempotency: createIdempotencyRepository(sql),
    releasePins: createReleasePinRepository(sql),
    servedCatalogs: createServedCatalogRepository(sql),
    applications: createApplicationRepository(sql),
    managedAccounts: createManagedAccountRepository(sql),
    pairings: createPairingRepository(sql),
    users: createUserRepository(sql),
    consoleSessions: createConsoleSessionRepository(sql),
    signInFailures: createSignInFailureRepository(sql),
    fleetCounts: createFleetCountRepository(sql),
    webhooks: createWebhookRepository(sql),
  }
}

async function exclusively<T>(sql: Sql, task: string, work: () => Promise<T>): Promise<T | undefined> {
  if (sql.engine === 'sqlite') return work()
  return sql.db.connection().execute(async (connection) => {
    const name = `print-hub:${task}`
    const { rows } = await rawSql<{
      locked: boolean
    }>`SELECT pg_try_advisory_lock(hashtext(${name})) AS locked`.execute(connection)
    if (!rows[0]?.locked) return undefined
    try {
      return await work()
    } finally {
      await rawSql`SELECT pg_advisory_unlock(hashtext(${name}))`.execute(connection)
    }
  })
}

/** The repositories inside one transaction (Storage.atomically). */
function scoped(tx: Sql): Storage {
  const storage: Storage = {
    ...repositoriesOn(tx),
    ping: async () => true,
    atomically: (work) => work(storage),
    exclusively: (_task, work) => work(),
    close: () => Promise.reject(new Error('a transaction is not closed; it ends with atomically')),
  }
  return storage
}

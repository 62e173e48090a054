import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach } from 'vitest'
import type { Engine } from '../../../cloud/storage/engine.ts'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { resolveOptions } from '../../../print-api/route-check.ts'
import type { Document } from '../../../protocol/document.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { storageEngine, type TestStorage } from './engines.ts'

/**
 * A job stored straight through storage, for contract tests that arrange rows: a small ESC/POS document of the
 * account and a job of it on `printerId` (pending and created now unless `job` says otherwise).
 */
export async function storeJob(
  storage: Storage,
  accountId: string,
  printerId: string,
  job: Partial<Pick<PrintJob, 'status' | 'created_at'>> = {},
): Promise<PrintJob> {
  const printJob = await jobOfNewDocument(storage, accountId, printerId, job)
  if (!(await insertWithinCapacity(storage, accountId, printJob, 1e6)))
    throw new Error('storeJob: the job was refused')
  return printJob
}

/**
 * The job inserted unless the account already has `capacity` unfinished jobs (printJobs.create with nothing
 * else asked of it): whether it was.
 */
export async function insertWithinCapacity(
  storage: Storage,
  accountId: string,
  job: PrintJob,
  capacity: number,
): Promise<boolean> {
  return (await storage.printJobs.create(accountId, job, { capacity })) !== 'queue_full'
}

/** As storeJob, but only the document is stored: the job is for the test to insert. */
export async function jobOfNewDocument(
  storage: Storage,
  accountId: string,
  printerId: string,
  job: Partial<Pick<PrintJob, 'status' | 'created_at'>> = {},
): Promise<PrintJob> {
  const { document, printJob } = unstoredJob(printerId, job)
  if (!(await storage.documents.insertWithinQuota(accountId, document, 1e9)))
    throw new Error('jobOfNewDocument: the document was refused')
  return printJob
}

/** A RAW document of `size_bytes` and a job printing it, neither stored. */
export function unstoredJob(
  printerId: string,
  job: Partial<Pick<PrintJob, 'status' | 'created_at'>> = {},
  sizeBytes = 10,
): { document: Document; printJob: PrintJob } {
  const createdAt = job.created_at ?? new Date().toISOString()
  const document: Document = {
    document_id: randomUUID(),
    document_mime_type: 'application/vnd.escpos',
    document_format: 'raw',
    document_raw_language: 'escpos',
    size_bytes: sizeBytes,
    sha256: randomUUID().replaceAll('-', ''),
    filename: null,
    created_at: createdAt,
  }
  const printJob: PrintJob = {
    print_job_id: randomUUID(),
    document_id: document.document_id,
    document_mime_type: document.document_mime_type,
    document_format: document.document_format,
    document_raw_language: document.document_raw_language,
    printer_id: printerId,
    status: job.status ?? 'pending',
    ...resolveOptions({}),
    created_at: createdAt,
    reserved_at: null,
    started_at: null,
    completed_at: null,
    failure_reason: null,
    failure_detail: null,
    waiting_reason: null,
    origin: 'cloud',
    duplicate_of: null,
  }
  return { document, printJob }
}

type OnlineOrNot = Record<'online' | 'offline', string>

/** Contract tests' storage with a shop account whose receipt printers are on an online and an offline hub. */
export interface ShopOnHubs {
  t: TestStorage
  accountId: string
  /** Each printer's id. */
  printerOf: OnlineOrNot
  /** Each printer's hub's id. */
  hubOf: OnlineOrNot
}

/**
 * For a describe block on `engine`: before each test, a fresh storage with the shop of ShopOnHubs (its fields
 * are set then); it is closed after each test.
 */
export function shopWithPrintersOnHubs(engine: Engine): ShopOnHubs {
  const engineUnderTest = storageEngine(engine)
  const shop = {} as ShopOnHubs
  beforeEach(async () => {
    shop.t = await engineUnderTest.open()
    const { storage } = shop.t
    shop.accountId = (await storage.accounts.create('Shop')).account_id
    const printerOn = async (online: boolean) => {
      const agent = await storage.agents.insert({ account_id: shop.accountId, name: 'hub', online })
      const printer = await storage.printers.insert({
        account_id: shop.accountId,
        agent_id: agent.agent_id,
        name: 'Receipts',
        capabilities: RECEIPT_PRINTER,
        reported: online,
      })
      return [printer.printer_id, agent.agent_id] as const
    }
    const [online, offline] = [await printerOn(true), await printerOn(false)]
    shop.printerOf = { online: online[0], offline: offline[0] }
    shop.hubOf = { online: online[1], offline: offline[1] }
  })
  afterEach(async () => {
    await shop.t.close()
  })
  return shop
}

import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../cloud/app.ts'
import { type CloudConfig, loadConfig } from '../../cloud/config.ts'
import type { ConsoleClock } from '../../cloud/console/console-context.ts'
import type { SafeFetchOptions } from '../../cloud/fetch/safe-fetch.ts'
import type { JobEvents } from '../../cloud/print-jobs/job-events.ts'
import { createBlobStore } from '../../cloud/storage/blob-store.ts'
import { openStorage, type Storage } from '../../cloud/storage/storage.ts'
import type { PdfInspector } from '../../print-api/documents/pdf-inspection.ts'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import type { Scope } from '../../protocol/enums.ts'
import type { PrinterCapabilities } from '../../protocol/printer.ts'
import { tempDir } from '../helpers/temp-dir.ts'

export const ALL_SCOPES: Scope[] = [
  'printers:read',
  'documents:write',
  'print_jobs:write',
  'print_jobs:read',
  'webhooks:write',
]

export const RECEIPT_PRINTER: PrinterCapabilities = {
  document_formats: ['raw', 'pdf'],
  raw_languages: ['escpos'],
  dpi: [203],
  media_width_mm: { min: 58, max: 80 },
  media_height_mm: null,
  color: false,
  duplex: false,
}

export const LABEL_PRINTER: PrinterCapabilities = {
  document_formats: ['raw', 'pdf'],
  raw_languages: ['zpl', 'tspl', 'cpcl'],
  dpi: [203, 300],
  media_width_mm: { min: 25, max: 104 },
  media_height_mm: { min: 10, max: 300 },
  color: false,
  duplex: false,
}

/** A bearer token for an account's client, stored (hashed) straight through storage, valid for an hour. */
export async function issueToken(
  storage: Storage,
  accountId: string,
  clientId: string,
  scopes: Scope[] = ALL_SCOPES,
): Promise<string> {
  const token = generateSecret('pat')
  await storage.apiClients.storeToken(hashSecret(token), {
    account_id: accountId,
    client_id: clientId,
    scopes,
    expires_at: Date.now() + 3600_000,
  })
  return token
}

export interface TestAccount {
  accountId: string
  clientId: string
  clientSecret: string
  agentId: string
  receiptPrinterId: string
  labelPrinterId: string
  /** A bearer token with the given scopes (all by default), issued straight through storage. */
  token(scopes?: Scope[]): Promise<string>
}

export interface TestCloud {
  app: FastifyInstance
  storage: Storage
  config: CloudConfig
  dataDir: string
  createAccount(name?: string): Promise<TestAccount>
  close(): Promise<void>
}

export interface TestCloudOptions {
  env?: Record<string, string>
  pdfInspector?: PdfInspector
  fetchSeams?: Pick<SafeFetchOptions, 'resolve' | 'connect' | 'tlsCa' | 'dnsServers'>
  /** What the app tells of created and cancelled jobs (nothing by default). */
  jobEvents?: JobEvents
  /** The console's clock (session expiry, sign-in throttling); the system's by default. */
  consoleClock?: ConsoleClock
  /** Another cloud's data directory (a restart of it); a fresh one by default, removed on close. */
  dataDir?: string
}

/** A cloud app on a fresh SQLite file in a temp dir, with quotas high enough not to get in a test's way. */
export async function startTestCloud(options: TestCloudOptions = {}): Promise<TestCloud> {
  const dir = options.dataDir === undefined ? tempDir('cloud-test-') : { path: options.dataDir, remove() {} }
  const config = loadConfig({
    DATA_DIR: dir.path,
    PUBLIC_URL: 'http://127.0.0.1:8080',
    RATE_LIMIT_PER_IP: '100000',
    RATE_LIMIT_PER_ACCOUNT: '100000',
    ...options.env,
  })
  const storage = await openStorage({ dataDir: config.dataDir, databaseUrl: config.databaseUrl })
  const app = await buildApp({
    config,
    storage,
    blobs: createBlobStore(config.dataDir),
    ...(options.pdfInspector && { pdfInspector: options.pdfInspector }),
    ...(options.fetchSeams && { fetchSeams: options.fetchSeams }),
    ...(options.jobEvents && { jobEvents: options.jobEvents }),
    ...(options.consoleClock && { consoleClock: options.consoleClock }),
  })
  await app.ready()
  return {
    app,
    storage,
    config,
    dataDir: dir.path,
    async createAccount(name = 'Test shop') {
      const account = await storage.accounts.create(name)
      const clientSecret = generateSecret('cs')
      const client = await storage.apiClients.create(account.account_id, hashSecret(clientSecret), ALL_SCOPES)
      const agent = await storage.agents.insert({
        account_id: account.account_id,
        name: 'Front desk hub',
        online: true,
      })
      const receipt = await storage.printers.insert({
        account_id: account.account_id,
        agent_id: agent.agent_id,
        name: 'Receipts',
        capabilities: RECEIPT_PRINTER,
        reported: true,
      })
      const label = await storage.printers.insert({
        account_id: account.account_id,
        agent_id: agent.agent_id,
        name: 'Labels',
        capabilities: LABEL_PRINTER,
      })
      return {
        accountId: account.account_id,
        clientId: client.client_id,
        clientSecret,
        agentId: agent.agent_id,
        receiptPrinterId: receipt.printer_id,
        labelPrinterId: label.printer_id,
        token: async (scopes = ALL_SCOPES) =>
          await issueToken(storage, account.account_id, client.client_id, scopes),
      }
    },
    async close() {
      await app.close()
      await storage.close()
      dir.remove()
    },
  }
}

/** Base64 of a small ESC/POS receipt: ESC @, text, feed, partial cut (GS V 66 0). */
export const ESCPOS_RECEIPT = Buffer.concat([
  Buffer.from([0x1b, 0x40]),
  Buffer.from('Thank you!\n', 'ascii'),
  Buffer.from([0x1d, 0x56, 0x42, 0x00]),
])

import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { JOB_RULES } from '../../../cloud/print-jobs/lifecycle.ts'
import type { LanJob } from '../../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS } from '../../../protocol/print-job.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES } from './engines.ts'
import { shopWithPrintersOnHubs, storeJob } from './stored-jobs.ts'

describe.each(ENGINES)('jobs a hub took on its LAN, in storage on %s', (engine) => {
  const shop = shopWithPrintersOnHubs(engine)
  const storage = () => shop.t.storage

  const lanJob = (overrides: Partial<LanJob> = {}): LanJob => ({
    v: 1,
    print_job_id: randomUUID(),
    printer_id: shop.printerOf.online,
    document: {
      document_id: randomUUID(),
      sha256: 'b'.repeat(64),
      size_bytes: 12,
      format: 'raw',
      raw_language: 'escpos',
      mime_type: 'application/vnd.escpos',
      filename: null,
    },
    options: { ...PRINT_OPTION_DEFAULTS, copies: 2 },
    created_at: '2026-11-28T12:00:00.000Z',
    client_id: 'till-7',
    idempotency: { endpoint: '/api/v1/print-jobs/from-base64', key: 'k1', fingerprint: 'c'.repeat(64) },
    status: 'reserved',
    at: '2026-11-28T12:00:00.000Z',
    ...overrides,
  })

  it('records a LAN job once, reserved, with its id and options; its document is held by the hub only', async () => {
    const job = lanJob()
    expect(await storage().printJobs.recordLanJob(shop.hubOf.online, job)).toBe('recorded')
    expect(await storage().printJobs.recordLanJob(shop.hubOf.online, job)).toBe('known')
    expect(await storage().printJobs.findById(shop.accountId, job.print_job_id)).toMatchObject({
      print_job_id: job.print_job_id,
      document_id: job.document.document_id,
      status: 'reserved',
      copies: 2,
      reserved_at: job.created_at,
    })
    // Not downloadable from the cloud, and not counted against the account's storage.
    expect(await storage().documents.findById(shop.accountId, job.document.document_id)).toBeUndefined()
    expect(await storage().documents.retainedBytes(shop.accountId)).toBe(0)
    const dispatchable = await storage().printJobs.dispatchable(job.print_job_id)
    expect(dispatchable).toMatchObject({ agent_id: shop.hubOf.online, idempotency: job.idempotency })
  })

  it('moves a recorded LAN job by the hub’s reports only, through the lifecycle’s rules', async () => {
    const job = lanJob()
    await storage().printJobs.recordLanJob(shop.hubOf.online, job)
    const print = (hubId: string) =>
      storage().printJobs.apply(job.print_job_id, JOB_RULES.print, { completed_at: job.at }, hubId)
    expect(await print(shop.hubOf.offline)).toBeUndefined()
    expect(await print(shop.hubOf.online)).toMatchObject({ status: 'printed' })
  })

  it('refuses a LAN job on another hub’s printer, or naming a document the account does not hold', async () => {
    expect(await storage().printJobs.recordLanJob(shop.hubOf.offline, lanJob())).toBe('refused')
    const other = (await storage().accounts.create('Other shop')).account_id
    const agent = await storage().agents.insert({ account_id: other, name: 'hub', online: true })
    const printer = await storage().printers.insert({
      account_id: other,
      agent_id: agent.agent_id,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    const theirs = await storeJob(storage(), other, printer.printer_id)
    const stolen = lanJob({ document: { ...lanJob().document, document_id: theirs.document_id } })
    expect(await storage().printJobs.recordLanJob(shop.hubOf.online, stolen)).toBe('refused')
    expect(await storage().printJobs.findById(shop.accountId, stolen.print_job_id)).toBeUndefined()
  })

  it('records the LAN job that printed a cloud job’s request when the hub dropped the cloud job', async () => {
    const job = await storeJob(storage(), shop.accountId, shop.printerOf.online)
    const printedOnLan = randomUUID()
    const dropped = await storage().printJobs.apply(
      job.print_job_id,
      JOB_RULES.dropByHub,
      { completed_at: new Date().toISOString(), duplicate_of: printedOnLan },
      shop.hubOf.online,
    )
    expect(dropped).toMatchObject({ status: 'cancelled' })
  })
})

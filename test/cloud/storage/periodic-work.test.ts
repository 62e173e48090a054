import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HubBus } from '../../../cloud/broker/hub-bus.ts'
import { Dispatcher } from '../../../cloud/dispatch/dispatcher.ts'
import { Housekeeping } from '../../../cloud/housekeeping/housekeeping.ts'
import { createBlobStore } from '../../../cloud/storage/blob-store.ts'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import { resolveOptions } from '../../../print-api/route-check.ts'
import type { Document } from '../../../protocol/document.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { storageEngine, type TestStorage } from './engines.ts'
import { insertWithinCapacity } from './stored-jobs.ts'

const HOUR = 3600_000
const silent = pino({ level: 'silent' })

/** A bus that records what a node publishes; no hub answers. */
function recordingBus(): HubBus & { published: { agentId: string; topic: string; payload: unknown }[] } {
  const published: { agentId: string; topic: string; payload: unknown }[] = []
  return {
    published,
    async publish(agentId, topic, payload) {
      published.push({ agentId, topic, payload })
    },
    async subscribe() {},
  }
}

/**
 * Periodic work with two cloud nodes on one database (issue 9 point 4): each runs the same task at the same
 * moment, and no job or document is processed twice. PostgreSQL only: on SQLite one cloud serves a DATA_DIR
 * (its lock file), and two connections of one process cannot both write (the second's busy wait would hold
 * the thread the first needs to finish).
 */
describe('periodic work of two nodes on one PostgreSQL database', () => {
  const engineUnderTest = storageEngine('postgres')
  let first: TestStorage
  let second: Storage
  let accountId: string
  let agentId: string
  let printerId: string

  beforeEach(async () => {
    first = await engineUnderTest.open()
    second = await openStorage(first.settings)
    const storage = first.storage
    accountId = (await storage.accounts.create('Shop')).account_id
    agentId = (await storage.agents.insert({ account_id: accountId, name: 'hub', online: true })).agent_id
    printerId = (
      await storage.printers.insert({
        account_id: accountId,
        agent_id: agentId,
        name: 'Receipts',
        capabilities: RECEIPT_PRINTER,
        reported: true,
      })
    ).printer_id
  })
  afterEach(async () => {
    await second.close()
    await first.close()
  })

  const document = async (createdAt: number): Promise<Document> => {
    const d: Document = {
      document_id: randomUUID(),
      document_mime_type: 'application/vnd.escpos',
      document_format: 'raw',
      document_raw_language: 'escpos',
      size_bytes: 100,
      sha256: randomUUID().replaceAll('-', ''),
      filename: null,
      created_at: new Date(createdAt).toISOString(),
    }
    expect(await first.storage.documents.insertWithinQuota(accountId, d, 1e9)).toBe(true)
    return d
  }
  const pendingJob = async (createdAt: number, offered: boolean): Promise<string> => {
    const d = await document(createdAt)
    const job: PrintJob = {
      print_job_id: randomUUID(),
      document_id: d.document_id,
      document_mime_type: d.document_mime_type,
      document_format: d.document_format,
      document_raw_language: d.document_raw_language,
      printer_id: printerId,
      status: 'pending',
      ...resolveOptions({}),
      created_at: new Date(createdAt).toISOString(),
      reserved_at: null,
      started_at: null,
      completed_at: null,
      failure_reason: null,
      failure_detail: null,
      waiting_reason: null,
      origin: 'cloud',
      duplicate_of: null,
    }
    expect(await insertWithinCapacity(first.storage, accountId, job, 1000)).toBe(true)
    if (offered) {
      await first.db
        .updateTable('print_jobs')
        .set({ offered_at: new Date(createdAt).toISOString() })
        .where('print_job_id', '=', job.print_job_id)
        .execute()
    }
    return job.print_job_id
  }
  const dispatcherOn = (storage: Storage, bus: HubBus, pendingExpirySeconds = 60) =>
    new Dispatcher({
      storage,
      bus,
      logger: silent,
      publicUrl: 'http://127.0.0.1:8080',
      pendingExpirySeconds,
      expirySweepMs: 100,
      cancelConfirmTimeoutMs: 100,
    })

  it('expire each stale job once: a job no hub holds fails once, a hub holding one is asked once', async () => {
    const old = Date.now() - 2 * HOUR
    const unoffered = [
      await pendingJob(old, false),
      await pendingJob(old, false),
      await pendingJob(old, false),
    ]
    const offered = [await pendingJob(old, true), await pendingJob(old, true)]
    const [busA, busB] = [recordingBus(), recordingBus()]
    const [a, b] = [dispatcherOn(first.storage, busA), dispatcherOn(second, busB)]

    const [expiredByA, expiredByB] = await Promise.all([a.expireStale(), b.expireStale()])
    // The asks to drop are sent after the sweep returns.
    await Promise.all([a.stop(), b.stop()])

    expect([...expiredByA, ...expiredByB].sort()).toEqual([...unoffered].sort())
    const asks = [...busA.published, ...busB.published].filter((m) => m.topic === 'command')
    expect(asks.map((m) => (m.payload as { print_job_id: string }).print_job_id).sort()).toEqual(
      [...offered].sort(),
    )
    for (const id of unoffered) {
      expect(await first.storage.printJobs.findById(accountId, id)).toMatchObject({
        status: 'failed',
        failure_reason: 'expired',
      })
    }
  })

  it('offer a job whose offer went missing once, whichever node sweeps first', async () => {
    const missed = [await pendingJob(Date.now() - HOUR, false), await pendingJob(Date.now() - HOUR, false)]
    const [busA, busB] = [recordingBus(), recordingBus()]
    const [a, b] = [dispatcherOn(first.storage, busA, 86_400), dispatcherOn(second, busB, 86_400)]
    // The sweep runs on its timer, every 100 ms on both nodes.
    await Promise.all([a.start(), b.start()])
    await expect
      .poll(() => [...busA.published, ...busB.published].filter((m) => m.topic === 'job-offer').length, {
        timeout: 10_000,
      })
      .toBe(2)
    // A sentinel: a job whose offer goes missing now is offered by a later sweep. Each node alone sweeps one
    // (the other stopped; the second node's dispatcher started afresh, as after a restart): by then neither
    // has offered the first two again.
    const offered = () =>
      [...busA.published, ...busB.published]
        .filter((m) => m.topic === 'job-offer')
        .map((m) => (m.payload as { print_job_id: string }).print_job_id)
    const sweptAlone = async (bus: { published: { payload: unknown }[] }) => {
      const later = await pendingJob(Date.now() - HOUR, false)
      missed.push(later)
      await expect
        .poll(
          () => bus.published.some((m) => (m.payload as { print_job_id?: string }).print_job_id === later),
          {
            timeout: 10_000,
          },
        )
        .toBe(true)
    }
    await b.stop()
    await sweptAlone(busA)
    await a.stop()
    const again = dispatcherOn(second, busB, 86_400)
    await again.start()
    await sweptAlone(busB)
    await again.stop()
    expect(offered().sort()).toEqual([...missed].sort())
  })

  it('purge each unneeded document once when both run housekeeping at the same moment', async () => {
    const old = Date.now() - 72 * HOUR
    for (let i = 0; i < 20; i++) await document(old)
    const housekeeping = (storage: Storage) =>
      new Housekeeping({
        storage,
        blobs: createBlobStore(first.dataDir),
        logger: silent,
        intervalMs: 60_000,
        documentRetentionHours: 24,
      })
    const passes = await Promise.all([housekeeping(first.storage).runOnce(), housekeeping(second).runOnce()])

    expect(passes.map((pass) => pass.failed)).toEqual([[], []])
    expect(passes[0]!.documents + passes[1]!.documents).toBe(20)
    expect(await first.storage.documents.retainedBytes(accountId)).toBe(0)
    const queued = await first.db.selectFrom('blob_deletions').select('sha256').execute()
    expect(queued).toHaveLength(0)
  })

  it('let one node at a time run a periodic task', async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let locked = () => {}
    const holding = new Promise<void>((resolve) => {
      locked = resolve
    })
    // The first node holds the task's lock from when its work starts until `held` resolves. (Polling the second
    // node instead timed out once on a busy machine, before the first had taken the lock.)
    const running = first.storage.exclusively('task', async () => {
      locked()
      await held
      return 'first'
    })
    await holding
    expect(await second.exclusively('task', async () => 'second')).toBeUndefined()
    release()
    expect(await running).toBe('first')
    expect(await second.exclusively('task', async () => 'second')).toBe('second')
  })
})

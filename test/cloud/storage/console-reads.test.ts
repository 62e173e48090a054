import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashSecret } from '../../../print-api/secrets.ts'
import type { PrintJobStatus } from '../../../protocol/enums.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageForEachTest } from './engines.ts'
import { storeJob } from './stored-jobs.ts'

/**
 * What the console's Overview and Hubs pages read and change, on both engines: an account's hubs that are not
 * revoked, renaming one, its pending enrollments, and its jobs of a period counted by status.
 */
describe.each(ENGINES)('console reads on %s', (engine) => {
  const t = storageForEachTest(engine)

  const account = async (name = 'Shop') => (await t.storage.accounts.create(name)).account_id

  it('lists and finds the account’s unrevoked hubs, newest first, and renames only those', async () => {
    const accountId = await account()
    const otherId = await account('Other shop')
    const first = await t.storage.agents.insert({ account_id: accountId, name: 'Front desk', online: true })
    const second = await t.storage.agents.insert({ account_id: accountId, name: 'Back office' })
    const revoked = await t.storage.agents.insert({ account_id: accountId, name: 'Stolen' })
    const others = await t.storage.agents.insert({ account_id: otherId, name: 'Not yours' })
    await t.storage.agents.revoke(revoked.agent_id, new Date())

    expect(await t.storage.agents.listUnrevoked(accountId)).toEqual([second, first])
    expect(await t.storage.agents.findUnrevoked(accountId, first.agent_id)).toEqual(first)
    expect(await t.storage.agents.findUnrevoked(accountId, revoked.agent_id)).toBeUndefined()
    expect(await t.storage.agents.findUnrevoked(accountId, others.agent_id)).toBeUndefined()

    expect(await t.storage.agents.rename(accountId, first.agent_id, 'Till 1')).toBe(true)
    expect(await t.storage.agents.findUnrevoked(accountId, first.agent_id)).toEqual({
      ...first,
      name: 'Till 1',
    })
    expect(await t.storage.agents.rename(accountId, revoked.agent_id, 'Found')).toBe(false)
    expect(await t.storage.agents.rename(accountId, others.agent_id, 'Mine now')).toBe(false)
    expect((await t.storage.agents.findById(others.agent_id))?.name).toBe('Not yours')
    expect((await t.storage.agents.findById(revoked.agent_id))?.name).toBe('Stolen')
  })

  it('lists the account’s pending enrollments only: not claimed, revoked, expired or another account’s', async () => {
    const accountId = await account()
    const otherId = await account('Other shop')
    const now = new Date()
    const later = new Date(now.getTime() + 3600_000)
    const create = (id: string, name: string, expiresAt = later) =>
      t.storage.enrollments.create(id, name, hashSecret(randomUUID()), expiresAt)
    const pending = await create(accountId, 'Pending one')
    const claimedToken = randomUUID()
    await t.storage.enrollments.create(accountId, 'Claimed', hashSecret(claimedToken), later)
    const revoked = await create(accountId, 'Revoked')
    await create(accountId, 'Expired', new Date(now.getTime() - 1000))
    await create(otherId, 'Another account’s')
    const newest = await create(accountId, 'Pending two')
    expect(
      (await t.storage.enrollments.claim(hashSecret(claimedToken), hashSecret(randomUUID()), 'pi', now))
        .outcome,
    ).toBe('claimed')
    expect(await t.storage.enrollments.revoke(revoked.enrollment_id, now)).toBe(true)

    expect(await t.storage.enrollments.listPending(accountId, now)).toEqual([newest, pending])
    // At a later time the same enrollments have expired.
    expect(await t.storage.enrollments.listPending(accountId, new Date(later.getTime() + 1))).toEqual([])
  })

  it('counts the account’s jobs created since a time by status, in one answer with every status', async () => {
    const accountId = await account()
    const otherId = await account('Other shop')
    const printerOf = async (id: string) => {
      const agent = await t.storage.agents.insert({ account_id: id, name: 'hub' })
      return (
        await t.storage.printers.insert({
          account_id: id,
          agent_id: agent.agent_id,
          name: 'Receipts',
          capabilities: RECEIPT_PRINTER,
        })
      ).printer_id
    }
    const printers = { [accountId]: await printerOf(accountId), [otherId]: await printerOf(otherId) }
    const since = '2026-11-23T12:00:00.000Z'
    const job = (id: string, status: PrintJobStatus, createdAt: string) =>
      storeJob(t.storage, id, printers[id] ?? '', { status, created_at: createdAt })
    await job(accountId, 'printed', '2026-11-23T12:00:00.000Z') // at `since`: counted
    await job(accountId, 'printed', '2026-11-24T09:00:00.000Z')
    await job(accountId, 'failed', '2026-11-24T10:00:00.000Z')
    await job(accountId, 'pending', '2026-11-24T11:00:00.000Z')
    await job(accountId, 'printed', '2026-11-23T11:59:59.999Z') // before `since`: not counted
    await job(accountId, 'cancelled', '2026-11-20T08:00:00.000Z') // before `since`: not counted
    await job(otherId, 'printed', '2026-11-24T09:30:00.000Z') // another account's
    expect(await t.storage.printJobs.countByStatusSince(accountId, since)).toEqual({
      pending: 1,
      reserved: 0,
      printing: 0,
      printed: 2,
      failed: 1,
      cancelled: 0,
    })
    expect(await t.storage.printJobs.countByStatusSince(await account('Empty'), since)).toEqual({
      pending: 0,
      reserved: 0,
      printing: 0,
      printed: 0,
      failed: 0,
      cancelled: 0,
    })
  })
})

import { beforeEach, describe, expect, it } from 'vitest'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageForEachTest } from './engines.ts'

/** Keyset pages (cloud/storage/paging.ts): a cursor is looked up within the list it came from; on both engines. */
describe.each(ENGINES)('paging through a list on %s', (engine) => {
  const t = storageForEachTest(engine)
  let accountId: string
  let agentId: string
  beforeEach(async () => {
    accountId = (await t.storage.accounts.create('Shop')).account_id
    agentId = (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
  })

  const addPrinter = async (account_id: string, agent_id: string, name: string) =>
    (await t.storage.printers.insert({ account_id, agent_id, name, capabilities: RECEIPT_PRINTER }))
      .printer_id

  it('pages newest first, each page after its cursor, the last one without a next cursor', async () => {
    const ids = []
    for (const name of ['a', 'b', 'c', 'd', 'e']) ids.push(await addPrinter(accountId, agentId, name))
    const first = await t.storage.printers.list(accountId, 2)
    expect(first?.data.map((p) => p.printer_id)).toEqual([ids[4], ids[3]])
    expect(first?.next_cursor).toBe(ids[3])
    const second = await t.storage.printers.list(accountId, 2, ids[3])
    expect(second?.data.map((p) => p.printer_id)).toEqual([ids[2], ids[1]])
    const last = await t.storage.printers.list(accountId, 2, ids[1])
    expect(last).toEqual({ data: [expect.objectContaining({ printer_id: ids[0] })], next_cursor: null })
  })

  it('has no page after a cursor that names no row of the list: unknown, another account’s, removed', async () => {
    const other = (await t.storage.accounts.create('Other')).account_id
    const otherAgent = (await t.storage.agents.insert({ account_id: other, name: 'hub' })).agent_id
    const othersPrinter = await addPrinter(other, otherAgent, 'theirs')
    const removed = await addPrinter(accountId, agentId, 'removed')
    await addPrinter(accountId, agentId, 'kept')
    expect(await t.storage.printers.remove(removed, '2026-11-25T09:00:00.000Z')).toMatchObject({
      removed: true,
    })

    expect(
      await t.storage.printers.list(accountId, 10, '00000000-0000-4000-8000-000000000000'),
    ).toBeUndefined()
    expect(await t.storage.printers.list(accountId, 10, othersPrinter)).toBeUndefined()
    expect(await t.storage.printers.list(accountId, 10, removed)).toBeUndefined()
    expect(await t.storage.agents.list(accountId, 10, otherAgent)).toBeUndefined()
    expect((await t.storage.agents.list(other, 10, otherAgent))?.data).toEqual([])
  })
})

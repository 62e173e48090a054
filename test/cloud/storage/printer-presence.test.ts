import { beforeEach, describe, expect, it } from 'vitest'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageForEachTest } from './engines.ts'

/**
 * A printer is online while its hub's latest state report names it and the hub is online. With several cloud
 * nodes a hub's presence and its state report (both sent on each connect) may be handled by different nodes
 * in either order, so neither write may depend on the other having been made first; on both engines.
 */
describe.each(ENGINES)('printers online with their hub on %s', (engine) => {
  const t = storageForEachTest(engine)
  let accountId: string
  let agentId: string
  beforeEach(async () => {
    accountId = (await t.storage.accounts.create('Shop')).account_id
    agentId = (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
  })

  const reported = (key: string): HubPrinter => ({
    key,
    name: `Printer ${key}`,
    uri: `socket://192.0.2.10:${key === 'a' ? 9100 : 9101}`,
    languages: ['escpos'],
    capabilities: RECEIPT_PRINTER,
    health: { state: 'ready', reasons: [], checked_at: '2026-11-25T09:00:00.000Z' },
  })
  const online = async (key: string) =>
    (await t.storage.printers.findById(accountId, printerIdFor(agentId, key)))?.online
  const listed = async () =>
    Object.fromEntries(
      ((await t.storage.printers.list(accountId, 10))?.data ?? []).map((p) => [p.name, p.online]),
    )

  it('brings the reported printers online when the presence is handled after the state report', async () => {
    await t.storage.printers.syncFromHub(accountId, agentId, [reported('a')], '2026-11-25T09:00:00.000Z')
    expect(await online('a')).toBe(false)
    await t.storage.hubPresence.markOnline(agentId, 's1', '2026-11-25T09:00:00.001Z')
    expect(await online('a')).toBe(true)
    expect(await listed()).toEqual({ 'Printer a': true })
  })

  it('has the reported printers online when the state report is handled after the presence', async () => {
    await t.storage.hubPresence.markOnline(agentId, 's1', '2026-11-25T09:00:00.000Z')
    await t.storage.printers.syncFromHub(accountId, agentId, [reported('a')], '2026-11-25T09:00:00.001Z')
    expect(await online('a')).toBe(true)
  })

  it('takes every printer offline with its hub, and a late state report does not bring them back', async () => {
    await t.storage.hubPresence.markOnline(agentId, 's1', '2026-11-25T09:00:00.000Z')
    await t.storage.printers.syncFromHub(accountId, agentId, [reported('a')], '2026-11-25T09:00:00.000Z')
    await t.storage.hubPresence.markOffline(agentId, 's1', '2026-11-25T09:01:00.000Z')
    await t.storage.hubPresence.printersLastSeen(agentId, '2026-11-25T09:01:00.000Z')
    expect(await online('a')).toBe(false)
    await t.storage.printers.syncFromHub(accountId, agentId, [reported('a')], '2026-11-25T09:01:00.001Z')
    expect(await online('a')).toBe(false)
    expect(await t.storage.printers.findById(accountId, printerIdFor(agentId, 'a'))).toMatchObject({
      last_seen_at: '2026-11-25T09:01:00.001Z',
    })
  })

  it('keeps a printer the latest report leaves out offline while its hub is online', async () => {
    await t.storage.hubPresence.markOnline(agentId, 's1', '2026-11-25T09:00:00.000Z')
    await t.storage.printers.syncFromHub(
      accountId,
      agentId,
      [reported('a'), reported('b')],
      '2026-11-25T09:00:00.000Z',
    )
    await t.storage.printers.syncFromHub(accountId, agentId, [reported('b')], '2026-11-25T09:00:10.000Z')
    expect(await listed()).toEqual({ 'Printer a': false, 'Printer b': true })
    // The hub reconnects: its presence alone brings back what its latest report named, and only that.
    await t.storage.hubPresence.markOffline(agentId, 's1', '2026-11-25T09:01:00.000Z')
    await t.storage.hubPresence.printersLastSeen(agentId, '2026-11-25T09:01:00.000Z')
    await t.storage.hubPresence.markOnline(agentId, 's2', '2026-11-25T09:02:00.000Z')
    expect(await listed()).toEqual({ 'Printer a': false, 'Printer b': true })
  })

  it('refuses to remove a printer while it is online, and removes it once its hub is offline', async () => {
    await t.storage.printers.syncFromHub(accountId, agentId, [reported('a')], '2026-11-25T09:00:00.000Z')
    await t.storage.hubPresence.markOnline(agentId, 's1', '2026-11-25T09:00:00.001Z')
    const printerId = printerIdFor(agentId, 'a')
    expect(await t.storage.printers.remove(printerId, '2026-11-25T09:00:01.000Z')).toEqual({
      removed: false,
      reason: 'online',
    })
    await t.storage.hubPresence.markOffline(agentId, 's1', '2026-11-25T09:01:00.000Z')
    expect(await t.storage.printers.remove(printerId, '2026-11-25T09:01:01.000Z')).toMatchObject({
      removed: true,
    })
  })
})

import { beforeEach, describe, expect, it } from 'vitest'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { ENGINES, storageForEachTest } from './engines.ts'

/**
 * What many hubs' presences and state reports write when they are asked together (a fleet's connects and
 * health rounds, batched): each hub's own values, as if each were written alone, on both engines.
 */
describe.each(ENGINES)('hubs reporting together on %s', (engine) => {
  const t = storageForEachTest(engine)
  let accountId: string
  let hubs: string[]
  beforeEach(async () => {
    accountId = (await t.storage.accounts.create('Shop')).account_id
    hubs = []
    for (const name of ['one', 'two', 'three'])
      hubs.push((await t.storage.agents.insert({ account_id: accountId, name })).agent_id)
  })

  const printer = (key: string): HubPrinter => ({
    key,
    name: `Printer ${key}`,
    uri: 'socket://192.0.2.10:9100',
    languages: ['escpos'],
    capabilities: RECEIPT_PRINTER,
    health: { state: 'ready', reasons: [], checked_at: '2026-11-27T09:00:00.000Z' },
  })
  const printers = async () =>
    Object.fromEntries(
      ((await t.storage.printers.list(accountId, 20))?.data ?? []).map((p) => [
        `${hubs.indexOf(p.agent_id)}:${p.name}`,
        [p.online, p.last_seen_at],
      ]),
    )

  it('marks each hub online with its own session, but not a revoked one', async () => {
    const [one, two, three] = hubs as [string, string, string]
    await t.storage.agents.revoke(three, new Date())
    expect(
      await Promise.all([
        t.storage.hubPresence.markOnline(one, 's-one', '2026-11-27T09:00:01.000Z'),
        t.storage.hubPresence.markOnline(two, 's-two', '2026-11-27T09:00:02.000Z'),
        t.storage.hubPresence.markOnline(three, 's-three', '2026-11-27T09:00:03.000Z'),
      ]),
    ).toEqual([true, true, false])
    // Only the current session takes a hub offline: an old connection's last will changes nothing.
    expect(
      await Promise.all([
        t.storage.hubPresence.markOffline(one, 's-old', '2026-11-27T09:00:04.000Z'),
        t.storage.hubPresence.markOffline(two, 's-two', '2026-11-27T09:00:05.000Z'),
      ]),
    ).toEqual([false, true])
    expect(await t.storage.agents.findById(one)).toMatchObject({
      online: true,
      last_seen_at: '2026-11-27T09:00:01.000Z',
    })
    expect(await t.storage.agents.findById(two)).toMatchObject({
      online: false,
      last_seen_at: '2026-11-27T09:00:05.000Z',
    })
    expect(await t.storage.agents.findById(three)).toMatchObject({ online: false, last_seen_at: null })
  })

  it('applies a hub’s online and its own last will in the order asked, whatever else is waiting', async () => {
    const [one, two] = hubs as [string, string]
    await t.storage.hubPresence.markOnline(two, 's-two', '2026-11-27T09:00:00.000Z')
    // Another hub's will is asked first, then this hub's connect and the will of that same connection (a node
    // back from the broker gets queued presences and wills together).
    await Promise.all([
      t.storage.hubPresence.markOffline(two, 's-two', '2026-11-27T09:00:01.000Z'),
      t.storage.hubPresence.markOnline(one, 's-one', '2026-11-27T09:00:02.000Z'),
      t.storage.hubPresence.markOffline(one, 's-one', '2026-11-27T09:00:03.000Z'),
    ])
    expect(await t.storage.agents.findById(one)).toMatchObject({
      online: false,
      last_seen_at: '2026-11-27T09:00:03.000Z',
    })
    expect(await t.storage.agents.findById(two)).toMatchObject({ online: false })
  })

  it('records each hub’s version and printers, and answers each with its own release record', async () => {
    const [one, two, three] = hubs as [string, string, string]
    await t.storage.releasePins.pinHub(two, '1.2.0')
    for (const hub of hubs)
      await t.storage.hubPresence.markOnline(hub, `s-${hub}`, '2026-11-27T09:00:00.000Z')
    await t.storage.printers.syncFromHub(
      accountId,
      three,
      [printer('gone'), printer('kept')],
      '2026-11-27T08:00:00.000Z',
    )
    const [records] = await Promise.all([
      Promise.all(
        hubs.map((hub, i) =>
          t.storage.agents.recordState(
            hub,
            { version: `1.${i}.0`, lan: null },
            `2026-11-27T09:00:1${i}.000Z`,
          ),
        ),
      ),
      t.storage.printers.syncFromHub(
        accountId,
        one,
        [printer('a'), printer('b')],
        '2026-11-27T09:00:10.000Z',
      ),
      t.storage.printers.syncFromHub(accountId, two, [printer('a')], '2026-11-27T09:00:11.000Z'),
      // A report leaves out a printer its hub reported before: it is no longer online.
      t.storage.printers.syncFromHub(accountId, three, [printer('kept')], '2026-11-27T09:00:12.000Z'),
    ])
    expect(records).toEqual(
      hubs.map((hub, i) => ({
        agent_id: hub,
        account_id: accountId,
        version: `1.${i}.0`,
        account_pin: null,
        hub_pin: hub === two ? '1.2.0' : null,
        update: null,
      })),
    )
    expect(await printers()).toEqual({
      '0:Printer a': [true, '2026-11-27T09:00:10.000Z'],
      '0:Printer b': [true, '2026-11-27T09:00:10.000Z'],
      '1:Printer a': [true, '2026-11-27T09:00:11.000Z'],
      '2:Printer gone': [false, '2026-11-27T08:00:00.000Z'],
      '2:Printer kept': [true, '2026-11-27T09:00:12.000Z'],
    })
    expect(await t.storage.printers.locate(printerIdFor(one, 'b'))).toMatchObject({
      agent_id: one,
      printer_key: 'b',
    })
    // Going offline together: each hub's reported printers were last seen when it went.
    await Promise.all([
      t.storage.hubPresence.printersLastSeen(one, '2026-11-27T09:05:00.000Z'),
      t.storage.hubPresence.printersLastSeen(three, '2026-11-27T09:06:00.000Z'),
    ])
    expect(await printers()).toMatchObject({
      '0:Printer a': [true, '2026-11-27T09:05:00.000Z'],
      '1:Printer a': [true, '2026-11-27T09:00:11.000Z'],
      '2:Printer gone': [false, '2026-11-27T08:00:00.000Z'],
      '2:Printer kept': [true, '2026-11-27T09:06:00.000Z'],
    })
  })

  it('stores every printer of hubs that together report more printers than one statement takes', async () => {
    // 64 hubs of 64 printers: 4,096 printers at 11 parameters each pass SQLite's bound of 32,766.
    const fleet = [...hubs]
    while (fleet.length < 64)
      fleet.push(
        (await t.storage.agents.insert({ account_id: accountId, name: `hub ${fleet.length}` })).agent_id,
      )
    const keys = Array.from({ length: 64 }, (_, i) => `p${i}`)
    await Promise.all(
      fleet.map((hub) =>
        t.storage.printers.syncFromHub(accountId, hub, keys.map(printer), '2026-11-27T09:00:00.000Z'),
      ),
    )
    const reported = await t.db
      .selectFrom('printers')
      .select(['agent_id', 'printer_key'])
      .where('reported', '=', 1)
      .execute()
    expect(new Set(reported.map((p) => `${p.agent_id}/${p.printer_key}`))).toEqual(
      new Set(fleet.flatMap((hub) => keys.map((key) => `${hub}/${key}`))),
    )
  })
})

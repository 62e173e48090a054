import { describe, expect, it } from 'vitest'
import { ENGINES, storageForEachTest } from './engines.ts'

/** The write each state report of a hub makes (its presence: hub-presence.test.ts), on both engines. */
describe.each(ENGINES)('hubs on %s', (engine) => {
  const t = storageForEachTest(engine)

  it("records a reported version and answers, in the same statement, with what the hub's release roll-out reads", async () => {
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const hub = (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
    const at = '2026-11-24T12:00:00.000Z'
    expect(await t.storage.agents.recordState(hub, { version: '1.2.3', lan: null }, at)).toEqual({
      agent_id: hub,
      account_id: accountId,
      version: '1.2.3',
      account_pin: null,
      hub_pin: null,
      update: null,
    })
    const update = { version: '1.3.0', status: 'failed', failure: 'download_failed', at } as const
    await t.storage.releasePins.pinAccount(accountId, '1.3.0')
    await t.storage.releasePins.pinHub(hub, '1.2.9')
    await t.storage.releasePins.recordUpdate(hub, update)
    const record = await t.storage.agents.recordState(hub, { version: '1.2.4', lan: null }, at)
    expect(record).toEqual(await t.storage.releasePins.forHub(hub))
    expect(record).toEqual({
      agent_id: hub,
      account_id: accountId,
      version: '1.2.4',
      account_pin: '1.3.0',
      hub_pin: '1.2.9',
      update,
    })
    expect(await t.storage.agents.findById(hub)).toMatchObject({ version: '1.2.4', last_seen_at: at })
    expect(
      await t.storage.agents.recordState(
        '00000000-0000-4000-8000-000000000000',
        { version: '1.2.4', lan: null },
        at,
      ),
    ).toBeUndefined()
  })
})

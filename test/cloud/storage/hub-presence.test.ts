import { describe, expect, it } from 'vitest'
import { ENGINES, storageForEachTest } from './engines.ts'

/**
 * A hub's presence: online and offline by session, and the hubs an external broker's nodes (unrevokedIds) or
 * the will recheck (offlineAmong) ask to announce themselves, on both engines.
 */
describe.each(ENGINES)('hub presence on %s', (engine) => {
  const t = storageForEachTest(engine)

  it('lists every hub that is not revoked, online or not, in every account', async () => {
    const ids: string[] = []
    for (const name of ['Shop', 'Other shop']) {
      const accountId = (await t.storage.accounts.create(name)).account_id
      for (const online of [true, false])
        ids.push((await t.storage.agents.insert({ account_id: accountId, name: 'hub', online })).agent_id)
    }
    await t.storage.agents.revoke(ids[1]!, new Date())
    expect((await t.storage.hubPresence.unrevokedIds()).sort()).toEqual([ids[0], ids[2], ids[3]].sort())
  })

  it('leaves out, when asked, the hubs online and heard from since a time (not one whose last will came since)', async () => {
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const hub = async () => (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
    const [never, before, at, after, offlineAfter] = [
      await hub(),
      await hub(),
      await hub(),
      await hub(),
      await hub(),
    ]
    const since = '2026-11-24T12:00:00.000Z'
    await t.storage.hubPresence.markOnline(before!, 's1', '2026-11-24T11:59:59.999Z')
    await t.storage.hubPresence.markOnline(at!, 's2', since)
    await t.storage.hubPresence.markOnline(after!, 's3', '2026-11-24T12:00:05.000Z')
    await t.storage.hubPresence.markOffline(offlineAfter!, null, '2026-11-24T12:00:06.000Z')
    // After a broker restart a node handles the last wills of the hubs' old sessions: a hub whose new presence
    // was lost (published before the node subscribed again) is offline, and must be asked all the same.
    expect((await t.storage.hubPresence.unrevokedIds(since)).sort()).toEqual(
      [never, before, offlineAfter].sort(),
    )
  })

  it('marks a hub online only while it is not revoked, and says whether it did', async () => {
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const kept = (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
    const revoked = (await t.storage.agents.insert({ account_id: accountId, name: 'old hub' })).agent_id
    await t.storage.agents.revoke(revoked, new Date())
    const at = '2026-11-24T12:00:00.000Z'
    expect(await t.storage.hubPresence.markOnline(kept, 's1', at)).toBe(true)
    expect(await t.storage.hubPresence.markOnline(revoked, 's2', at)).toBe(false)
    expect(await t.storage.hubPresence.markOnline('00000000-0000-4000-8000-000000000000', 's3', at)).toBe(
      false,
    )
    expect((await t.storage.agents.findById(kept))?.online).toBe(true)
    expect((await t.storage.agents.findById(revoked))?.online).toBe(false)
  })

  it('keeps a connection from bringing its hub online once that connection’s end was handled', async () => {
    // Several nodes share a hub's messages: the last will of a connection may be handled before that
    // connection's presence, and a presence the hub repeated (announce) may be handled after its will.
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const hub = (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
    expect(await t.storage.hubPresence.markOffline(hub, 's1', '2026-11-24T12:00:01.000Z')).toBe(false)
    expect(await t.storage.hubPresence.markOnline(hub, 's1', '2026-11-24T12:00:00.000Z')).toBe(false)
    expect(await t.storage.agents.findById(hub)).toMatchObject({ online: false, last_seen_at: null })
    expect(await t.storage.hubPresence.markOnline(hub, 's2', '2026-11-24T12:00:02.000Z')).toBe(true)
    expect(await t.storage.hubPresence.markOffline(hub, 's2', '2026-11-24T12:00:03.000Z')).toBe(true)
    expect(await t.storage.hubPresence.markOnline(hub, 's2', '2026-11-24T12:00:02.500Z')).toBe(false)
    expect(await t.storage.agents.findById(hub)).toMatchObject({
      online: false,
      last_seen_at: '2026-11-24T12:00:03.000Z',
    })
    expect(await t.storage.hubPresence.markOnline(hub, 's3', '2026-11-24T12:00:04.000Z')).toBe(true)
    expect(await t.storage.agents.findById(hub)).toMatchObject({ online: true })
  })

  it('names, of some hubs, those offline and not revoked', async () => {
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    const hub = async (online: boolean) =>
      (await t.storage.agents.insert({ account_id: accountId, name: 'hub', online })).agent_id
    const [up, down, revoked] = [await hub(true), await hub(false), await hub(false)]
    await t.storage.agents.revoke(revoked!, new Date())
    const unknown = '00000000-0000-4000-8000-000000000000'
    expect(await t.storage.hubPresence.offlineAmong([up!, down!, revoked!, unknown])).toEqual([down])
    expect(await t.storage.hubPresence.offlineAmong([])).toEqual([])
  })
})

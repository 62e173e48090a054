import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

/** agents.unrevokedIds (an external broker's nodes ask these hubs to announce themselves), on both engines. */
describe.each(ENGINES)('hubs on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let t: TestStorage
  beforeEach(async () => {
    t = await engineUnderTest.open()
  })
  afterEach(async () => {
    await t.close()
  })

  it('lists every hub that is not revoked, online or not, in every account', async () => {
    const ids: string[] = []
    for (const name of ['Shop', 'Other shop']) {
      const accountId = (await t.storage.accounts.create(name)).account_id
      for (const online of [true, false])
        ids.push((await t.storage.agents.insert({ account_id: accountId, name: 'hub', online })).agent_id)
    }
    await t.storage.agents.revoke(ids[1]!, new Date())
    expect((await t.storage.agents.unrevokedIds()).sort()).toEqual([ids[0], ids[2], ids[3]].sort())
  })

  it('leaves out, when asked, the hubs heard from since a time', async () => {
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
    await t.storage.agents.markOnline(before!, 's1', '2026-11-24T11:59:59.999Z')
    await t.storage.agents.markOnline(at!, 's2', since)
    await t.storage.agents.markOnline(after!, 's3', '2026-11-24T12:00:05.000Z')
    await t.storage.agents.markOffline(offlineAfter!, null, '2026-11-24T12:00:06.000Z')
    expect((await t.storage.agents.unrevokedIds(since)).sort()).toEqual([never, before].sort())
  })
})

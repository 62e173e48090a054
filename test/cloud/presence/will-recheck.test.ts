import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HubBus } from '../../../cloud/broker/hub-bus.ts'
import { HubPresence } from '../../../cloud/presence/hub-presence.ts'
import { PROTOCOL_VERSION } from '../../../protocol/hub-messages.ts'
import { storageEngine, type TestStorage } from '../storage/engines.ts'

type Handler = (agentId: string, payload: unknown) => void | Promise<void>

const RECHECK_MS = 200

/**
 * A hub taken offline by a last will is asked who is here (`announce`) a while later if it is still offline:
 * with several nodes, a hub that reconnected at once may have had its new connection's presence handled before
 * its old connection's presence and will (docs/architecture.md, "Presence").
 */
describe('asking hubs taken offline by a last will who is here', () => {
  const engineUnderTest = storageEngine('sqlite')
  let t: TestStorage
  let hubPresence: HubPresence
  let hubId: string
  /** Another hub of the shop: its will, made after the fact under test, is the sentinel that comes later. */
  let laterHubId: string
  const handlers = new Map<string, Handler>()
  let announces: string[]
  /** When each announce was sent (ms). */
  let announcedAt: number[]
  /** The session the stand-in hub answers an announce with, as the hub does; null: the hub is gone. */
  let connectedAs: string | null

  const presence = async (online: boolean, session: string, agentId = hubId) => {
    await handlers.get('presence')?.(agentId, { v: PROTOCOL_VERSION, online, session })
    await hubPresence.handled()
  }
  const online = async () => (await t.storage.agents.findById(hubId))?.online
  /**
   * Everything the rechecks were to ask of the hub under test, they have asked: another hub, taken offline by
   * a will now, is asked about by a later pass (or the same one), and stopping ends the passes under way.
   */
  const laterRecheckDone = async () => {
    await presence(true, 'later', laterHubId)
    await presence(false, 'later', laterHubId)
    await expect.poll(() => announces.includes(laterHubId), { interval: 10, timeout: 10_000 }).toBe(true)
    await hubPresence.stop()
  }

  beforeEach(async () => {
    t = await engineUnderTest.open()
    const accountId = (await t.storage.accounts.create('Shop')).account_id
    hubId = (await t.storage.agents.insert({ account_id: accountId, name: 'hub' })).agent_id
    laterHubId = (await t.storage.agents.insert({ account_id: accountId, name: 'later hub' })).agent_id
    announces = []
    announcedAt = []
    connectedAs = null
    const bus: HubBus = {
      async publish(agentId, topic, payload) {
        if (topic !== 'command' || (payload as { command: string }).command !== 'announce') return
        announces.push(agentId)
        announcedAt.push(Date.now())
        if (agentId === hubId && connectedAs !== null) void presence(true, connectedAs)
      },
      async subscribe(topic, handler) {
        handlers.set(topic, handler as Handler)
      },
    }
    hubPresence = new HubPresence({
      storage: t.storage,
      bus,
      logger: pino({ level: 'silent' }),
      willRecheckMs: RECHECK_MS,
    })
    await hubPresence.start()
  })
  afterEach(async () => {
    await hubPresence.stop()
    await t.close()
  })

  it('brings back a connected hub whose old connection’s presence and will were handled after its new one’s', async () => {
    connectedAs = 's-new'
    await presence(true, 's-new')
    await presence(true, 's-old')
    const willAt = Date.now()
    await presence(false, 's-old')
    expect(await online()).toBe(false)
    await expect.poll(() => announces.length, { interval: 10, timeout: 5000 }).toBeGreaterThan(0)
    // Not at once but a while after the will: measured by the clock, not by looking right after the will.
    expect(announcedAt[0]! - willAt).toBeGreaterThanOrEqual(RECHECK_MS)
    await expect.poll(online, { interval: 10, timeout: 5000 }).toBe(true)
    expect(announces).toEqual([hubId])
  })

  it('asks a hub that is gone once, and nothing more of it', async () => {
    await presence(true, 's1')
    await presence(false, 's1')
    await expect.poll(() => announces.length, { interval: 10, timeout: 5000 }).toBeGreaterThan(0)
    await laterRecheckDone()
    expect(announces).toEqual([hubId, laterHubId])
    expect(await online()).toBe(false)
  })

  it('asks nothing of a hub that is back online by then, as a fleet is after a broker restart', async () => {
    await presence(true, 's1')
    await presence(false, 's1')
    await presence(true, 's2')
    await laterRecheckDone()
    expect(announces).toEqual([laterHubId])
    expect(await online()).toBe(true)
  })
})

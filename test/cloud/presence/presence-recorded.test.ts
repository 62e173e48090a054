import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HubBus } from '../../../cloud/broker/hub-bus.ts'
import { HubPresence } from '../../../cloud/presence/hub-presence.ts'
import { type HubPayload, PROTOCOL_VERSION } from '../../../protocol/hub-messages.ts'
import { storageEngine, type TestStorage } from '../storage/engines.ts'

type Handler = (agentId: string, payload: unknown) => void | Promise<void>

/**
 * A hub that asks (`confirm`) is told once its presence is recorded (`presence_recorded`), and announces
 * itself again until then: a cloud node may take a presence from the broker and die before recording it
 * (docs/architecture.md, "Nodes come and go").
 */
describe('answering a hub that asks whether its presence was recorded', () => {
  const engineUnderTest = storageEngine('sqlite')
  let t: TestStorage
  let hubPresence: HubPresence
  let accountId: string
  const handlers = new Map<string, Handler>()
  let commands: { agentId: string; command: HubPayload<'command'> }[]

  const presence = async (agentId: string, payload: HubPayload<'presence'>) => {
    await handlers.get('presence')?.(agentId, payload)
    await hubPresence.handled()
  }

  beforeEach(async () => {
    t = await engineUnderTest.open()
    accountId = (await t.storage.accounts.create('Shop')).account_id
    commands = []
    const bus: HubBus = {
      async publish(agentId, topic, payload) {
        if (topic === 'command') commands.push({ agentId, command: payload as HubPayload<'command'> })
      },
      async subscribe(topic, handler) {
        handlers.set(topic, handler as Handler)
      },
    }
    hubPresence = new HubPresence({ storage: t.storage, bus, logger: pino({ level: 'silent' }) })
    await hubPresence.start()
  })
  afterEach(async () => {
    await hubPresence.stop()
    await t.close()
  })

  it('answers once the hub is recorded online, with its session; not a hub that did not ask, nor a revoked one', async () => {
    const asking = (await t.storage.agents.insert({ account_id: accountId, name: 'new' })).agent_id
    const older = (await t.storage.agents.insert({ account_id: accountId, name: 'old' })).agent_id
    const revoked = (await t.storage.agents.insert({ account_id: accountId, name: 'gone' })).agent_id
    await t.storage.agents.revoke(revoked, new Date())

    await presence(asking, { v: PROTOCOL_VERSION, online: true, session: 's1', confirm: true })
    expect((await t.storage.agents.findById(asking))?.online).toBe(true)
    await presence(older, { v: PROTOCOL_VERSION, online: true, session: 's2' })
    await presence(revoked, { v: PROTOCOL_VERSION, online: true, session: 's3', confirm: true })
    // A connection's will handled first: its presence records nothing, and is not answered.
    await presence(asking, { v: PROTOCOL_VERSION, online: false, session: 's4' })
    await presence(asking, { v: PROTOCOL_VERSION, online: true, session: 's4', confirm: true })

    expect(commands).toEqual([
      { agentId: asking, command: { v: PROTOCOL_VERSION, command: 'presence_recorded', session: 's1' } },
    ])
  })
})

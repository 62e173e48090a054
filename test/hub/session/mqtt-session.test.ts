import { type AddressInfo, createServer, type Server } from 'node:net'
import { Aedes } from 'aedes'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { Backoff } from '../../../hub/session/backoff.ts'
import { MqttSession, type SessionOptions } from '../../../hub/session/mqtt-session.ts'
import type { HubPayload } from '../../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS } from '../../../protocol/print-job.ts'

const AGENT = '0b3a2a36-1d2e-4c55-9d0e-9d6f1b2c3d4e'
const OFFER: HubPayload<'job-offer'> = {
  v: 1,
  print_job_id: '6f1c2b7e-8d4a-4e6f-9a0b-1c2d3e4f5a6b',
  printer_id: '11111111-1111-4111-8111-111111111111',
  printer_key: 'socket://127.0.0.1:9100',
  document: {
    document_id: '22222222-2222-4222-8222-222222222222',
    url: 'http://127.0.0.1:1/x',
    sha256: 'a'.repeat(64),
    size_bytes: 3,
    format: 'raw',
    raw_language: 'escpos',
  },
  options: PRINT_OPTION_DEFAULTS,
  created_at: '2026-11-22T00:00:00.000Z',
  expires_at: '2026-11-22T01:00:00.000Z',
}

/**
 * A plain aedes broker on loopback (no policy: this tests the hub's side of the session), on a port the OS
 * picks unless `port` names one (a broker restarted where it was).
 */
async function startBroker(port = 0) {
  const broker = await Aedes.createBroker()
  const server: Server = createServer(broker.handle)
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  const published: { topic: string; payload: string }[] = []
  broker.on('publish', (packet, client) => {
    if (client) published.push({ topic: packet.topic, payload: packet.payload.toString() })
  })
  const send = (topic: string, payload: string) =>
    new Promise<void>((resolve) =>
      broker.publish(
        { cmd: 'publish', topic, payload: Buffer.from(payload), qos: 1, retain: false, dup: false },
        () => resolve(),
      ),
    )
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      broker.close()
    })
  return { broker, port: bound, published, send, close }
}

/** Waits on a busy machine are for a sign, not for time: the timeout only bounds a test that fails. */
const POLL = { timeout: 10_000, interval: 10 }

/** A hub session for AGENT with quick reconnects and no log; the rest from `options`. */
function testSession(options: Pick<SessionOptions, 'mqttUrl' | 'onConnected'> & Partial<SessionOptions>) {
  return new MqttSession({
    agentId: AGENT,
    credential: 'hub_test',
    keepaliveSeconds: 5,
    logger: pino({ level: 'silent' }),
    onOffer: () => {},
    onCommand: () => {},
    backoff: new Backoff(50, 200),
    ...options,
  })
}

describe("the hub's MQTT session", () => {
  const stops: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
  })

  it('announces itself, takes only offers and commands that match the protocol, and reconnects after the broker restarts', async () => {
    let broker = await startBroker()
    const { port } = broker
    const offers: unknown[] = []
    const commands: unknown[] = []
    let connects = 0
    const session = testSession({
      mqttUrl: `mqtt://127.0.0.1:${broker.port}`,
      onConnected: () => {
        connects++
      },
      onOffer: (offer) => offers.push(offer),
      onCommand: (command) => commands.push(command),
    })
    session.start()
    stops.push(() => session.stop())
    await expect.poll(() => connects, POLL).toBe(1)
    expect(broker.published.map((p) => [p.topic, JSON.parse(p.payload).online])).toEqual([
      [`hubs/${AGENT}/presence`, true],
    ])

    for (const junk of [
      'not json',
      '{}',
      JSON.stringify({ ...OFFER, v: 2 }),
      JSON.stringify({ ...OFFER, print_job_id: 'x' }),
    ]) {
      await broker.send(`hubs/${AGENT}/job-offer`, junk)
    }
    await broker.send(`hubs/${AGENT}/command`, JSON.stringify({ v: 1, command: 'format_disk' }))
    await broker.send(`hubs/${AGENT}/job-offer`, JSON.stringify(OFFER))
    await broker.send(`hubs/${AGENT}/command`, JSON.stringify({ v: 1, command: 'refresh_state' }))
    await expect.poll(() => [offers.length, commands.length], POLL).toEqual([1, 1])
    expect(offers).toEqual([OFFER])
    expect(commands).toEqual([{ v: 1, command: 'refresh_state' }])

    await broker.close()
    await expect(
      session.publish('job-ack', { v: 1, print_job_id: OFFER.print_job_id, at: OFFER.created_at }),
    ).rejects.toThrow()
    broker = await startBroker(port)
    stops.push(() => broker.close())
    await expect.poll(() => connects, POLL).toBe(2)
    await session.publish('job-ack', { v: 1, print_job_id: OFFER.print_job_id, at: OFFER.created_at })
    expect(broker.published.map((p) => p.topic)).toEqual([`hubs/${AGENT}/presence`, `hubs/${AGENT}/job-ack`])
  })
})

describe("the hub's MQTT session asked to announce itself", () => {
  const stops: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
  })

  it('publishes its presence again with the same session and runs what follows a connect, without handing the command on', async () => {
    const broker = await startBroker()
    stops.push(() => broker.close())
    const commands: unknown[] = []
    let connects = 0
    const session = testSession({
      mqttUrl: `mqtt://127.0.0.1:${broker.port}`,
      onConnected: () => {
        connects++
      },
      onCommand: (command) => commands.push(command),
    })
    session.start()
    stops.push(() => session.stop())
    await expect.poll(() => connects, POLL).toBe(1)
    await broker.send(`hubs/${AGENT}/command`, JSON.stringify({ v: 1, command: 'announce' }))
    await expect.poll(() => connects, POLL).toBe(2)
    const presences = broker.published
      .filter((p) => p.topic === `hubs/${AGENT}/presence`)
      .map((p) => JSON.parse(p.payload))
    expect(presences).toHaveLength(2)
    expect(presences[1]).toEqual({ v: 1, online: true, session: presences[0].session, confirm: true })
    expect(commands).toEqual([])
  })
})

describe("the hub's MQTT session until the cloud records its presence", () => {
  const stops: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
  })

  it('announces itself again, waiting longer each time, until the cloud answers for this session', async () => {
    const broker = await startBroker()
    stops.push(() => broker.close())
    const commands: unknown[] = []
    let connects = 0
    const session = testSession({
      mqttUrl: `mqtt://127.0.0.1:${broker.port}`,
      onConnected: () => {
        connects++
      },
      onCommand: (command) => commands.push(command),
      presenceConfirmMs: 100,
    })
    session.start()
    stops.push(() => session.stop())
    const presences = () =>
      broker.published
        .filter((p) => p.topic === `hubs/${AGENT}/presence`)
        .map((p) => JSON.parse(p.payload) as { session: string })
    // No cloud answers (its node took the presence and died): the presence goes again, then what follows a
    // connect (the state and the outbox), with the same session.
    await expect.poll(() => presences().length, POLL).toBeGreaterThanOrEqual(3)
    // What follows each announcement runs after its presence is published: waited for, not read at once.
    await expect.poll(() => connects, POLL).toBeGreaterThanOrEqual(3)
    const { session: current } = presences()[0]!
    expect(new Set(presences().map((p) => JSON.stringify(p)))).toEqual(
      new Set([JSON.stringify({ v: 1, online: true, session: current, confirm: true })]),
    )
    // An answer about another connection changes nothing; the answer for this one ends it.
    await broker.send(
      `hubs/${AGENT}/command`,
      JSON.stringify({ v: 1, command: 'presence_recorded', session: 'an-older-one' }),
    )
    const before = presences().length
    await expect.poll(() => presences().length, POLL).toBeGreaterThan(before)
    expect(session.awaitingPresenceConfirmation).toBe(true)
    await broker.send(
      `hubs/${AGENT}/command`,
      JSON.stringify({ v: 1, command: 'presence_recorded', session: current }),
    )
    // Answered, the hub stops waiting: no announce is due any more (its timer is what announces it again).
    await expect.poll(() => session.awaitingPresenceConfirmation, POLL).toBe(false)
    expect(commands).toEqual([])
  })
})

describe("the hub's MQTT session when the broker refuses its login", () => {
  it('asks the cloud where and how to connect, then connects where it says', async () => {
    // The broker the hub was told first refuses it; the cloud's lookup names another that takes it.
    const refusing = await Aedes.createBroker({
      authenticate: (_client, _user, _password, done) => {
        const error = Object.assign(new Error('bad user name or password'), { returnCode: 4 })
        done(error as never, false)
      },
    })
    const refusingServer = createServer(refusing.handle)
    await new Promise<void>((resolve) => refusingServer.listen(0, '127.0.0.1', resolve))
    const refusingPort = (refusingServer.address() as AddressInfo).port
    const accepting = await startBroker()
    const lookUps: number[] = []
    let connects = 0
    const session = testSession({
      mqttUrl: `mqtt://127.0.0.1:${refusingPort}`,
      onConnected: () => {
        connects++
      },
      lookUpBroker: async () => {
        lookUps.push(Date.now())
        return `mqtt://127.0.0.1:${accepting.port}`
      },
    })
    try {
      session.start()
      await expect.poll(() => connects, POLL).toBe(1)
      expect(lookUps).toHaveLength(1)
      expect(accepting.published.map((p) => p.topic)).toEqual([`hubs/${AGENT}/presence`])
    } finally {
      await session.stop()
      await accepting.close()
      await new Promise<void>((resolve) => {
        refusingServer.close(() => resolve())
        refusing.close()
      })
    }
  })
})

describe("the hub's MQTT session told of a new broker while it waits to reconnect", () => {
  it('connects to the new broker at once rather than after the wait', async () => {
    // The broker the hub kept is gone (its port is closed); a reconnect is a minute away.
    const gone = await startBroker()
    await gone.close()
    const accepting = await startBroker()
    const lines: Record<string, unknown>[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    let connects = 0
    const session = testSession({
      mqttUrl: `mqtt://127.0.0.1:${gone.port}`,
      logger,
      backoff: new Backoff(60_000, 60_000),
      onConnected: () => {
        connects++
      },
    })
    try {
      session.start()
      await expect.poll(() => lines.some((line) => line.msg === 'mqtt connection lost'), POLL).toBe(true)
      session.useBroker(`mqtt://127.0.0.1:${accepting.port}`)
      await expect.poll(() => connects, POLL).toBe(1)
      expect(session.connected).toBe(true)
      expect(accepting.published.map((p) => p.topic)).toEqual([`hubs/${AGENT}/presence`])
      expect(lines.filter((line) => line.msg === 'the cloud gave a new broker address')).toHaveLength(1)
    } finally {
      await session.stop()
      await accepting.close()
    }
  })
})

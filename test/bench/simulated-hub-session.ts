import { randomUUID } from 'node:crypto'
import net from 'node:net'
import mqttPacket, { type Packet } from 'mqtt-packet'
import { Backoff } from '../../hub/session/backoff.ts'
import { CONNECT_TIMEOUT_MS, hubKeepaliveSeconds } from '../../hub/session/mqtt-session.ts'
import { type HubPayload, type HubTopic, hubTopic, PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'

/**
 * One simulated hub's MQTT session for the multi-node benchmark: on the wire what the hub's own session
 * (hub/session/mqtt-session.ts) sends, MQTT 3.1.1 with its credential as login, a clean session, the offline
 * presence as last will, its `job-offer` and `command` subscriptions at QoS 1, presence online at QoS 1
 * after each connect, an answer to `announce`, the same keep-alive, CONNACK timeout and backoff with full
 * jitter (hub/session/backoff.ts), but written on mqtt-packet instead of mqtt.js.
 * Why: all of the benchmark runs on one 2-core machine, where real hubs bring CPU of their own. With mqtt.js
 * 19,500 sessions took 95 % of a core while the fleet reconnected (about 0.7 ms per reconnect), and the
 * broker and nodes got what was left; the figure measured the load generator as much as the cloud.
 */
export interface SimulatedHubOptions {
  host: string
  port: number
  /** The loopback address its connections come from (multi-node-hub-worker.ts). */
  localAddress: string
  agentId: string
  credential: string
  /** The cloud's keep-alive (the hub asks for two thirds of it, as the hub does). */
  keepaliveSeconds: number
  /** Once subscribed and its presence acknowledged, after every connect and every `announce`. */
  onConnected(): void
  onOffer(offer: HubPayload<'job-offer'>): void
  /**
   * A connection closed, and why: an error after its CONNACK each time (`after connect: …`), and for attempts
   * that never connected, the reason once each time it changes (as the hub logs them).
   */
  onLost(reason: string | undefined): void
}

interface Waiting {
  resolve(): void
  reject(error: Error): void
}

export class SimulatedHubSession {
  readonly #o: SimulatedHubOptions
  readonly #backoff = new Backoff()
  #socket: net.Socket | undefined
  #connected = false
  #session = ''
  #messageId = 0
  #lastReason: string | undefined
  /** The keep-alive timer of the connection, put back at each packet sent. */
  #pinger: NodeJS.Timeout | undefined
  readonly #waiting = new Map<number, Waiting>()

  constructor(options: SimulatedHubOptions) {
    this.#o = options
  }

  /** CONNACK received and the connection still open (as mqtt.js's `connected`). */
  get connected(): boolean {
    return this.#connected
  }

  start(): void {
    this.#connect()
  }

  /** QoS 1; resolves on the broker's PUBACK, rejects when not connected or the connection closes first. */
  publish<T extends HubTopic>(topic: T, payload: HubPayload<T>): Promise<void> {
    if (!this.#connected) return Promise.reject(new Error('not connected'))
    return this.#send({
      cmd: 'publish',
      topic: hubTopic(this.#o.agentId, topic),
      payload: JSON.stringify(payload),
      qos: 1,
      dup: false,
      retain: false,
    })
  }

  /** Sends a packet that the broker acknowledges (PUBLISH QoS 1, SUBSCRIBE) and waits for the answer. */
  #send(packet: Packet): Promise<void> {
    const socket = this.#socket
    if (!socket) return Promise.reject(new Error('not connected'))
    this.#messageId = (this.#messageId % 0xffff) + 1
    const messageId = this.#messageId
    return new Promise((resolve, reject) => {
      this.#waiting.set(messageId, { resolve, reject })
      this.#write(socket, { ...packet, messageId } as Packet)
    })
  }

  #write(socket: net.Socket, packet: Packet): void {
    socket.write(mqttPacket.generate(packet))
    this.#pinger?.refresh()
  }

  #connect(): void {
    const { agentId, credential, keepaliveSeconds } = this.#o
    this.#session = randomUUID()
    const socket = net.createConnection({
      host: this.#o.host,
      port: this.#o.port,
      localAddress: this.#o.localAddress,
      noDelay: true,
    })
    this.#socket = socket
    const parser = mqttPacket.parser({ protocolVersion: 4 })
    const keepalive = hubKeepaliveSeconds(keepaliveSeconds)
    let reason: string | undefined
    let everConnected = false
    let pingAnswered = true
    const connackTimer = setTimeout(() => {
      reason = 'connack timeout'
      socket.destroy()
    }, CONNECT_TIMEOUT_MS)
    socket.on('connect', () => {
      socket.write(
        mqttPacket.generate({
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          clean: true,
          clientId: agentId,
          keepalive,
          username: agentId,
          password: Buffer.from(credential),
          will: {
            topic: hubTopic(agentId, 'presence'),
            payload: Buffer.from(
              JSON.stringify({ v: PROTOCOL_VERSION, online: false, session: this.#session }),
            ),
            qos: 1,
            retain: false,
          },
        }),
      )
    })
    socket.on('data', (chunk) => parser.parse(chunk))
    socket.on('error', (error: NodeJS.ErrnoException) => {
      reason ??= everConnected ? `after connect: ${error.message}` : (error.code ?? error.message)
    })
    parser.on('error', () => socket.destroy())
    parser.on('packet', (packet: Packet) => {
      switch (packet.cmd) {
        case 'connack':
          clearTimeout(connackTimer)
          if (packet.returnCode !== 0) {
            reason = 'login refused'
            socket.destroy()
            return
          }
          everConnected = true
          this.#connected = true
          this.#lastReason = undefined
          // As mqtt.js: PINGREQ after a keep-alive period without sending, closed if the last went unanswered.
          this.#pinger = setTimeout(() => {
            if (!pingAnswered) return socket.destroy()
            pingAnswered = false
            socket.write(mqttPacket.generate({ cmd: 'pingreq' }))
            this.#pinger?.refresh()
          }, keepalive * 1000)
          this.#send({
            cmd: 'subscribe',
            subscriptions: [
              { topic: hubTopic(agentId, 'job-offer'), qos: 1 },
              { topic: hubTopic(agentId, 'command'), qos: 1 },
            ],
          })
            .then(() => this.#announce())
            .then(() => this.#backoff.reset())
            .catch(() => {})
          return
        case 'suback':
        case 'puback':
          this.#waiting.get(packet.messageId ?? 0)?.resolve()
          this.#waiting.delete(packet.messageId ?? 0)
          return
        case 'pingresp':
          pingAnswered = true
          return
        case 'publish':
          if (packet.qos === 1) this.#write(socket, { cmd: 'puback', messageId: packet.messageId })
          this.#onMessage(packet.topic, packet.payload)
      }
    })
    socket.on('close', () => {
      clearTimeout(connackTimer)
      clearTimeout(this.#pinger)
      this.#pinger = undefined
      this.#connected = false
      this.#socket = undefined
      for (const waiting of this.#waiting.values()) waiting.reject(new Error('connection closed'))
      this.#waiting.clear()
      let lost: string | undefined
      if (everConnected) lost = reason
      else {
        const why = reason ?? 'no answer'
        if (why !== this.#lastReason) lost = why
        this.#lastReason = why
      }
      this.#o.onLost(lost)
      setTimeout(() => this.#connect(), this.#backoff.next())
    })
  }

  /**
   * Presence online with this connection's session, then what the hub does after a connect. It asks the cloud
   * to confirm, as the hub does, so that the cloud's answers are counted; it does not announce itself again
   * without one (the benchmark's nodes do not die).
   */
  #announce(): Promise<void> {
    return this.publish('presence', {
      v: PROTOCOL_VERSION,
      online: true,
      session: this.#session,
      confirm: true,
    }).then(() => this.#o.onConnected())
  }

  #onMessage(topic: string, payload: Buffer | string): void {
    let value: { command?: string }
    try {
      value = JSON.parse(payload.toString()) as { command?: string }
    } catch {
      return // The cloud sends JSON; a benchmark hub ignores anything else, as the hub drops it.
    }
    if (topic.endsWith('/job-offer')) this.#o.onOffer(value as HubPayload<'job-offer'>)
    else if (value.command === 'announce') this.#announce().catch(() => {})
  }
}

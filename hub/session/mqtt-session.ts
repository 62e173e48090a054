import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import mqtt, { type MqttClient } from 'mqtt'
import type { Logger } from 'pino'
import { decodeHubMessage } from '../../protocol/hub-message-decoder.ts'
import {
  type HubPayload,
  type HubTopic,
  hubTopic,
  PROTOCOL_VERSION,
  parseHubTopic,
} from '../../protocol/hub-messages.ts'
import { Backoff } from './backoff.ts'

export interface SessionOptions {
  mqttUrl: string
  agentId: string
  credential: string
  keepaliveSeconds: number
  logger: Logger
  /** Called after every (re)connect, once subscriptions and presence are in place. */
  onConnected(): void
  onOffer(offer: HubPayload<'job-offer'>): void
  /** Every command but `announce` and `presence_recorded`, which the session handles itself. */
  onCommand(command: AgentCommand): void
  /**
   * Asks the cloud again where and how to connect (its connection lookup), after the broker refused the
   * hub's login: a cloud on an external broker gives a hub its broker login at that lookup, and may have
   * moved the broker. Resolves the broker URL to use from then on.
   */
  lookUpBroker?(): Promise<string>
  backoff?: Backoff
  /**
   * How long after its presence the hub waits for the cloud's `presence_recorded` before it announces itself
   * again (doubling, with jitter, up to PRESENCE_CONFIRM_MAX_MS); PRESENCE_CONFIRM_MS by default.
   */
  presenceConfirmMs?: number
}

/**
 * Long enough that a cloud working through a fleet's reconnect (every hub online in the database within 19 to
 * 24 s of a broker restart in the multi-node benchmark) is not asked for more than it has queued; short enough
 * that a presence lost with a cloud node that died is made good within half a minute.
 */
export const PRESENCE_CONFIRM_MS = 20_000
/** A cloud that never answers (one older than `presence_recorded`) is announced to at most this often. */
const PRESENCE_CONFIRM_MAX_MS = 5 * 60_000

/** How long a connection attempt may take until the broker's CONNACK, before the hub gives up and backs off. */
export const CONNECT_TIMEOUT_MS = 10_000

/**
 * The keep-alive a hub asks for: the broker gives up on a client after one and a half keep-alive periods
 * (MQTT 3.1.1 §3.1.2.10), so two thirds of the cloud's figure means a lost hub is noticed within that figure.
 */
export function hubKeepaliveSeconds(cloudKeepaliveSeconds: number): number {
  return Math.max(1, Math.floor((cloudKeepaliveSeconds * 2) / 3))
}

/** CONNACK codes that refuse the login (MQTT 3.1.1 §3.2.2.3: 4 bad user name or password, 5 not authorised; MQTT 5 §3.2.2.2: 0x86, 0x87). */
const LOGIN_REFUSED = new Set([4, 5, 0x86, 0x87])

/** The commands the session hands on. */
export type AgentCommand = Exclude<HubPayload<'command'>, { command: 'announce' | 'presence_recorded' }>

/**
 * The hub's one MQTT session with the cloud. It reconnects by itself with exponential backoff and jitter;
 * after each connect it subscribes to its own topics, announces itself (its last will announces the loss),
 * and hands over to `onConnected` to reconcile. It announces itself again until the cloud says it recorded
 * the presence (`presence_recorded`): the broker's PUBACK only means the broker has the message, and a cloud
 * node that took it and died before recording it loses it (docs/architecture.md, "What a node that dies had
 * taken").
 */
export class MqttSession {
  readonly #o: SessionOptions
  readonly #backoff: Backoff
  #mqttUrl: string
  #client: MqttClient | undefined
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  #session = ''
  /** Why the last attempts could not connect, so that the same reason is logged once, not on every retry. */
  #lastUnreachable: string | undefined
  /** Publishes waiting for their PUBACK; failed when the connection closes, so nobody waits forever. */
  readonly #inFlight = new Set<(error: Error) => void>()
  /** Announces the hub again while the cloud has not said it recorded this session's presence. */
  #confirmTimer: NodeJS.Timeout | undefined
  #confirmWaitMs = 0

  constructor(options: SessionOptions) {
    this.#o = options
    this.#mqttUrl = options.mqttUrl
    this.#backoff = options.backoff ?? new Backoff()
  }

  get connected(): boolean {
    return this.#client?.connected ?? false
  }

  start(): void {
    this.#connect()
  }

  /** QoS 1; resolves when the broker acknowledged (PUBACK), rejects when not connected or the send failed. */
  publish<T extends HubTopic>(topic: T, payload: HubPayload<T>): Promise<void> {
    const client = this.#client
    if (!client?.connected) return Promise.reject(new Error('not connected'))
    return this.#publishOn(client, topic, payload)
  }

  #publishOn<T extends HubTopic>(client: MqttClient, topic: T, payload: HubPayload<T>): Promise<void> {
    return new Promise((resolve, reject) => {
      const abandon = (error: Error) => reject(error)
      this.#inFlight.add(abandon)
      client.publish(hubTopic(this.#o.agentId, topic), JSON.stringify(payload), { qos: 1 }, (error) => {
        this.#inFlight.delete(abandon)
        if (error) reject(error)
        else resolve()
      })
    })
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#stopAwaitingConfirmation()
    const client = this.#client
    this.#client = undefined
    if (!client) return
    if (client.connected) {
      await this.#publishOn(client, 'presence', {
        v: PROTOCOL_VERSION,
        online: false,
        session: this.#session,
      }).catch(() => {})
    }
    // A forced end of a client that is still connecting or already gone must not keep the hub from exiting.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000)
      client.end(!client.connected, {}, () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  #connect(): void {
    if (this.#stopped) return
    const { agentId, credential, keepaliveSeconds, logger } = this.#o
    this.#session = randomUUID()
    const will = { v: PROTOCOL_VERSION, online: false, session: this.#session }
    const client = mqtt.connect(this.#mqttUrl, {
      clientId: agentId,
      username: agentId,
      password: credential,
      keepalive: hubKeepaliveSeconds(keepaliveSeconds),
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      will: {
        topic: hubTopic(agentId, 'presence'),
        payload: Buffer.from(JSON.stringify(will)),
        qos: 1,
        retain: false,
      },
    })
    this.#client = client
    let connected = false
    let failure: string | undefined
    let refused = false
    client.on('connect', () => {
      connected = true
      this.#lastUnreachable = undefined
      // mqtt.js does not pass noDelay through (STACK-NOTES): set it on the socket.
      ;(client.stream as Socket).setNoDelay?.(true)
      this.#onConnect(client).catch((error: unknown) => {
        logger.warn({ err: error }, 'mqtt session set-up failed')
        client.end(true)
      })
    })
    client.on('message', (topic, payload) => this.#onMessage(topic, payload))
    client.on('error', (error) => {
      const code = (error as { code?: unknown }).code
      if (typeof code === 'number' && LOGIN_REFUSED.has(code)) refused = true
      failure = (error as NodeJS.ErrnoException).code ?? error.message
      if (connected) logger.warn({ err: error.message }, 'mqtt error')
    })
    client.on('close', () => {
      if (this.#client === client) this.#stopAwaitingConfirmation()
      for (const abandon of this.#inFlight) abandon(new Error('connection closed before PUBACK'))
      this.#inFlight.clear()
      if (this.#client !== client || this.#stopped) return
      if (!connected) this.#cannotReach(refused ? 'login refused' : (failure ?? 'no answer'))
      const delay = this.#backoff.next()
      logger.info({ retry_in_ms: delay }, 'mqtt connection lost')
      this.#client = undefined
      client.removeAllListeners()
      client.on('error', () => {})
      client.end(true)
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        if (refused && this.#o.lookUpBroker) void this.#lookUpThenConnect(this.#o.lookUpBroker)
        else this.#connect()
      }, delay)
    })
  }

  /**
   * The next connection goes to `url` (a lookup made at start-up named another broker than the one kept). A
   * session waiting to try the old address again connects to the new one now: the cloud has just answered,
   * and the wait was the backoff of a broker that is not there.
   */
  useBroker(url: string): void {
    if (url === this.#mqttUrl) return
    this.#o.logger.info({ mqtt_url: url }, 'the cloud gave a new broker address')
    this.#mqttUrl = url
    if (this.#timer === undefined || this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#connect()
  }

  /** After a refused login: the cloud's connection lookup first (it may provision the login), then connect. */
  async #lookUpThenConnect(lookUp: () => Promise<string>): Promise<void> {
    try {
      const url = await lookUp()
      if (url !== this.#mqttUrl) this.#o.logger.info({ mqtt_url: url }, 'the cloud gave a new broker address')
      this.#mqttUrl = url
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'the cloud connection lookup failed; trying the broker again')
    }
    if (!this.#stopped) this.#connect()
  }

  /** Says once per distinct reason why the broker cannot be reached, and which setting decides the address. */
  #cannotReach(reason: string): void {
    if (reason === this.#lastUnreachable) return
    this.#lastUnreachable = reason
    if (reason === 'login refused') {
      this.#o.logger.warn(
        { mqtt_url: this.#mqttUrl },
        'the MQTT broker refused the hub’s login; asking the cloud',
      )
      return
    }
    this.#o.logger.warn(
      {
        mqtt_url: this.#mqttUrl,
        reason,
        hint:
          'the cloud tells hubs this broker address: set MQTT_PUBLIC_URL on the cloud to one this hub can ' +
          'reach (unset, it is the host name in this hub’s --cloud URL with the cloud’s MQTT_PORT)',
      },
      'cannot reach the MQTT broker',
    )
  }

  async #onConnect(client: MqttClient): Promise<void> {
    const { agentId, logger } = this.#o
    await client.subscribeAsync([hubTopic(agentId, 'job-offer'), hubTopic(agentId, 'command')], { qos: 1 })
    // Waiting for the cloud's answer from before the presence goes, so that no answer can come first.
    this.#confirmWaitMs = this.#o.presenceConfirmMs ?? PRESENCE_CONFIRM_MS
    this.#awaitConfirmation()
    await this.publish('presence', this.#presence())
    this.#backoff.reset()
    logger.info({ session: this.#session }, 'mqtt connected')
    this.#o.onConnected()
  }

  #presence(): HubPayload<'presence'> {
    return { v: PROTOCOL_VERSION, online: true, session: this.#session, confirm: true }
  }

  /**
   * Whether the hub still waits for the cloud to record this connection's presence (it announces itself again
   * meanwhile); false once the cloud answered `presence_recorded`, and while disconnected.
   */
  get awaitingPresenceConfirmation(): boolean {
    return this.#confirmTimer !== undefined
  }

  #stopAwaitingConfirmation(): void {
    clearTimeout(this.#confirmTimer)
    this.#confirmTimer = undefined
  }

  /** Announces the hub again if the cloud has not recorded its presence in time, waiting longer each time. */
  #awaitConfirmation(): void {
    clearTimeout(this.#confirmTimer)
    const wait = this.#confirmWaitMs * (1 + Math.random() / 2)
    this.#confirmWaitMs = Math.min(PRESENCE_CONFIRM_MAX_MS, this.#confirmWaitMs * 2)
    this.#confirmTimer = setTimeout(() => {
      this.#confirmTimer = undefined
      if (this.#stopped || !this.connected) return
      this.#o.logger.info(
        { session: this.#session },
        'the cloud has not recorded the hub online; announcing again',
      )
      this.#announce()
      this.#awaitConfirmation()
    }, wait)
    this.#confirmTimer.unref?.()
  }

  /** The cloud asked who is here (protocol: `announce`): presence again, then what follows a connect. */
  #announce(): void {
    this.publish('presence', this.#presence()).then(
      () => this.#o.onConnected(),
      (error: unknown) => this.#o.logger.debug({ err: error }, 'presence not sent'),
    )
  }

  #onMessage(topic: string, payload: Buffer): void {
    const target = parseHubTopic(topic)?.topic
    if (target === 'job-offer') {
      const offer = decodeHubMessage('job-offer', payload)
      if (offer.ok) {
        this.#o.onOffer(offer.value)
        return
      }
    } else if (target === 'command') {
      const command = decodeHubMessage('command', payload)
      if (command.ok) {
        this.#onCommand(command.value)
        return
      }
    }
    this.#o.logger.warn({ topic }, 'message from the cloud dropped: it does not match the protocol')
  }

  #onCommand(command: HubPayload<'command'>): void {
    if (command.command === 'announce') this.#announce()
    else if (command.command === 'presence_recorded') {
      // An answer about an older connection says nothing of this one.
      if (command.session === this.#session) this.#stopAwaitingConfirmation()
    } else this.#o.onCommand(command)
  }
}

import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { HubCloud } from '../../hub/agent.ts'
import type { HubSession, SessionHandlers } from '../../hub/session/hub-session.ts'
import type { AgentCommand } from '../../hub/session/mqtt-session.ts'
import type { HubPayload, HubTopic } from '../../protocol/hub-messages.ts'
import { describeReport } from './jobs/job-reports.ts'

export interface Published {
  topic: HubTopic
  payload: Record<string, unknown>
}

/**
 * The hub's session without a broker: the test connects and drops it, sends offers and commands, and acts
 * as the broker acknowledging (PUBACK) what the hub publishes, at once or when told to.
 */
export class FakeSession implements HubSession {
  connected = false
  started = false
  /** Everything the hub published, acknowledged or not, in order. */
  readonly published: Published[] = []
  /** False: a publish waits for `ack()`, as one does for a slow broker's PUBACK. */
  autoAck = true
  #unacked: { topic: HubTopic; resolve(): void; reject(error: Error): void }[] = []

  constructor(private readonly handlers: SessionHandlers) {}

  start(): void {
    this.started = true
  }

  async stop(): Promise<void> {
    this.drop()
  }

  publish<T extends HubTopic>(topic: T, payload: HubPayload<T>): Promise<void> {
    if (!this.connected) return Promise.reject(new Error('not connected'))
    this.published.push({ topic, payload: payload as Record<string, unknown> })
    if (this.autoAck) return Promise.resolve()
    return new Promise((resolve, reject) => this.#unacked.push({ topic, resolve, reject }))
  }

  /** The broker acknowledges the oldest publish on `topic` not yet acknowledged. */
  ack(topic: HubTopic): void {
    const index = this.#unacked.findIndex((publish) => publish.topic === topic)
    if (index < 0) throw new Error(`nothing on ${topic} waits for its PUBACK`)
    this.#unacked.splice(index, 1)[0]?.resolve()
  }

  /** The broker acknowledges everything from now on, and what waits already (a test's clean-up). */
  ackAll(): void {
    this.autoAck = true
    for (const publish of this.#unacked.splice(0)) publish.resolve()
  }

  /** A (re)connect: the presence is out, the hub is told. */
  connect(): void {
    this.connected = true
    this.handlers.onConnected()
  }

  /** The connection closes: publishes waiting for their PUBACK fail, as MqttSession's do. */
  drop(): void {
    this.connected = false
    for (const publish of this.#unacked.splice(0))
      publish.reject(new Error('connection closed before PUBACK'))
  }

  offer(offer: HubPayload<'job-offer'>): void {
    this.handlers.onOffer(offer)
  }

  command(command: AgentCommand): void {
    this.handlers.onCommand(command)
  }

  /** The job reports published, as `topic:status[:reason]` (the state reports left out). */
  reports(): string[] {
    return this.published
      .filter((m) => m.topic !== 'state')
      .map(({ topic, payload }) => describeReport(topic, payload))
  }
}

/**
 * The cloud's agent API without a server: a download writes the document `documentOf` gives for its sha256
 * into the documents directory, named by its sha256 as the real client names it.
 */
export function fakeCloud(documentOf: (sha256: string) => Buffer): HubCloud & { downloads: string[] } {
  const downloads: string[] = []
  return {
    downloads,
    async download(url, sha256, _sizeBytes, dir) {
      downloads.push(url)
      mkdirSync(dir, { recursive: true })
      const file = path.join(dir, sha256)
      writeFileSync(file, documentOf(sha256))
      return file
    },
    async connection() {
      throw new Error('the fake cloud has no broker to give')
    },
    async lanCredentials() {
      throw new Error('the fake cloud keeps no LAN credentials')
    },
  }
}

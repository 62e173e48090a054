import type { HubPayload, HubTopic } from '../../protocol/hub-messages.ts'
import type { SessionOptions } from './mqtt-session.ts'

/** The hub's session with the cloud as its parts use it: an MqttSession, or a fake in unit tests. */
export interface HubSession {
  readonly connected: boolean
  start(): void
  /** Resolves once the broker acknowledged the message; rejects when not connected or the send failed. */
  publish<T extends HubTopic>(topic: T, payload: HubPayload<T>): Promise<void>
  stop(): Promise<void>
  /** The cloud named a broker in a lookup made elsewhere (a hub started with the last one it kept). */
  useBroker?(mqttUrl: string): void
}

/** What the session tells the hub: each (re)connect, and the offers and commands the cloud sends. */
export type SessionHandlers = Pick<SessionOptions, 'onConnected' | 'onOffer' | 'onCommand'>

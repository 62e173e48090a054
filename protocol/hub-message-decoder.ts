import { Compile } from 'typebox/compile'
import { HUB_TOPICS, type HubPayload, type HubTopic, PROTOCOL_VERSION } from './hub-messages.ts'

/** A message off the wire: its payload, valid for its topic, or why it is not. */
export type DecodedHubMessage<T extends HubTopic> =
  | { ok: true; value: HubPayload<T> }
  | { ok: false; reason: string }

const validators = Object.fromEntries(
  (Object.keys(HUB_TOPICS) as HubTopic[]).map((topic) => [topic, Compile(HUB_TOPICS[topic].schema)]),
) as { [T in HubTopic]: ReturnType<typeof Compile<(typeof HUB_TOPICS)[T]['schema']>> }

// A byte-order mark is left in, so that a payload that starts with one is not JSON (RFC 8259 §8.1: a sender
// must not add one).
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * Parses a payload of `topic` (UTF-8 JSON) and checks it against the topic's schema, the one both ends use:
 * the value, or the reason it was refused (not JSON, a protocol version this end does not know, or the first
 * place where it differs from the schema).
 */
export function decodeHubMessage<T extends HubTopic>(
  topic: T,
  payload: Uint8Array | string,
): DecodedHubMessage<T> {
  let value: unknown
  try {
    value = JSON.parse(typeof payload === 'string' ? payload : utf8.decode(payload))
  } catch {
    return { ok: false, reason: 'not JSON' }
  }
  const version = (value as { v?: unknown } | null)?.v
  if (version !== PROTOCOL_VERSION)
    return { ok: false, reason: `unknown protocol version ${String(version)}` }
  const validator = validators[topic]
  if (!validator.Check(value)) {
    const first = validator.Errors(value)[0]
    return { ok: false, reason: `${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`.trim() }
  }
  return { ok: true, value: value as HubPayload<T> }
}

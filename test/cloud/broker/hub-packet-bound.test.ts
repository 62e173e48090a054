import { type TSchema, Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maxHubPacketBytes } from '../../../cloud/broker/hub-packet-bound.ts'
import { maxJsonBytes } from '../../../cloud/broker/json-size-bound.ts'
import { loadConfig } from '../../../cloud/config.ts'
import { decodeHubMessage } from '../../../protocol/hub-message-decoder.ts'
import { HUB_TOPICS, type HubState, type HubTopic, hubTopic } from '../../../protocol/hub-messages.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from '../hub-link.ts'

/** `n` characters that JSON.stringify escapes as `\u0001`, the most bytes a character can take. */
const widest = (n: number, suffix = '') => '\u0001'.repeat(n - suffix.length) + suffix

/** A state message with every string and array at its schema bound (HubState, PrinterCapabilities, PrinterHealth). */
function largestState(): HubState {
  return {
    v: 1,
    agent_version: widest(64),
    host: { hostname: widest(255), platform: widest(64), arch: widest(64) },
    printers: Array.from({ length: 256 }, (_, i) => ({
      key: widest(512, String(i)),
      name: widest(200),
      uri: widest(1024),
      languages: Array(8).fill('escpos'),
      capabilities: {
        document_formats: Array(8).fill('raw'),
        raw_languages: Array(8).fill('escpos'),
        dpi: Array(16).fill(2400),
        media_width_mm: { min: 0.000001234567890123, max: 1.7976931348623157e308 },
        media_height_mm: { min: 0.000001234567890123, max: 1.7976931348623157e308 },
        color: false,
        duplex: false,
      },
      health: {
        state: 'cutter_error',
        reasons: Array(40).fill(widest(200)),
        checked_at: '2026-11-24T07:35:59.123456789+00:00',
      },
    })),
  }
}

describe('maxJsonBytes', () => {
  it('refuses a string without maxLength and an array without maxItems, naming where', () => {
    expect(() => maxJsonBytes(Type.Object({ a: Type.String() }))).toThrow('$.a: a string without maxLength')
    expect(() => maxJsonBytes(Type.Object({ b: Type.Array(Type.Boolean()) }))).toThrow(
      '$.b: an array without maxItems',
    )
  })

  it('bounds a value by its schema: 6 bytes a character, every item, every property', () => {
    const schema = Type.Object({
      s: Type.String({ maxLength: 3 }),
      l: Type.Array(Type.Enum(['x', 'yy']), { maxItems: 2 }),
      n: Type.Union([Type.Null(), Type.Boolean()]),
    })
    const value = { s: '\u0001\u0002\u0003', l: ['yy', 'yy'], n: false }
    expect(Buffer.byteLength(JSON.stringify(value))).toBe(maxJsonBytes(schema))
  })
})

describe('hub → cloud messages are bounded by their schemas', () => {
  const hubTopics = (Object.keys(HUB_TOPICS) as HubTopic[]).filter((t) => HUB_TOPICS[t].from === 'hub')

  it.each(hubTopics)('every string and array of %s has a bound', (topic) => {
    expect(maxJsonBytes(HUB_TOPICS[topic].schema as TSchema, topic)).toBeGreaterThan(0)
  })

  it('the largest valid state message fits the default MQTT_MAX_PACKET_BYTES', () => {
    const state = largestState()
    expect(decodeHubMessage('state', JSON.stringify(state))).toMatchObject({ ok: true })
    const agentId = '00000000-0000-4000-8000-000000000000'
    const packet = 5 + 2 + hubTopic(agentId, 'state').length + 2 + Buffer.byteLength(JSON.stringify(state))
    const dir = tempDir('packet-bound-')
    const config = loadConfig({ DATA_DIR: dir.path })
    dir.remove()
    expect(config.mqttMaxPacketBytes).toBe(maxHubPacketBytes())
    expect(packet).toBeLessThanOrEqual(config.mqttMaxPacketBytes)
  })
})

describe('a hub sending the largest state message, with default limits', () => {
  let full: Awaited<ReturnType<typeof startFullCloud>>
  beforeAll(async () => {
    full = await startFullCloud({ MQTT_PORT: '0' })
  })
  afterAll(async () => {
    await full.close()
  })

  it('stays connected, and the cloud records its printers', async () => {
    const { accountId, enrollmentToken } = await seedAccount(full.cloud, 'Big')
    const hub = await enroll(full.url, enrollmentToken)
    const client = await connectHub(`mqtt://127.0.0.1:${full.cloud.broker.port}`, {
      clientId: hub.agent_id,
      username: hub.agent_id,
      password: hub.credential,
    })
    try {
      const state = largestState()
      await client.publishAsync(hubTopic(hub.agent_id, 'state'), JSON.stringify(state), { qos: 1 })
      await expect
        .poll(async () => (await full.cloud.storage.agents.findById(hub.agent_id))?.version, {
          timeout: 20_000,
        })
        .toBe(state.agent_version)
      // The printers are written after the version (each with other hubs' reports, batched).
      const recordedPrinters = async () => {
        let printers = 0
        let cursor: string | undefined
        do {
          const page = await full.cloud.storage.printers.list(accountId, 100, cursor)
          printers += page?.data.length ?? 0
          cursor = page?.next_cursor ?? undefined
        } while (cursor)
        return printers
      }
      await expect.poll(recordedPrinters, { timeout: 20_000 }).toBe(256)
      expect(client.connected).toBe(true)
    } finally {
      client.end(true)
    }
  })
})

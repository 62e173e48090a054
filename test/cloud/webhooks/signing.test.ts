import { createHmac } from 'node:crypto'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { newWebhookSecret } from '../../../cloud/webhooks/secret-box.ts'
import { signDelivery } from '../../../cloud/webhooks/signing.ts'

const EVENT_ID = '0b8f3c1e-55a4-4f0e-9d7a-2f4d1c6b9e01'
const BODY = JSON.stringify({
  id: EVENT_ID,
  type: 'print_job.printed',
  data: { status: 'printed', note: 'é ✓' },
})

describe('signDelivery (Standard Webhooks headers)', () => {
  it('signs a body that the standardwebhooks library verifies with the secret', () => {
    const secret = newWebhookSecret()
    const at = new Date()
    const headers = signDelivery(EVENT_ID, BODY, [secret], at)
    expect(headers['webhook-id']).toBe(EVENT_ID)
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)))
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(new Webhook(secret).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY))
  })

  it('is the spec’s HMAC-SHA256 of "id.timestamp.body" under the base64-decoded secret', () => {
    const secret = newWebhookSecret()
    const at = new Date('2026-11-28T18:00:00.750Z')
    const headers = signDelivery(EVENT_ID, BODY, [secret], at)
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
    const expected = createHmac('sha256', key).update(`${EVENT_ID}.1795888800.${BODY}`).digest('base64')
    expect(headers['webhook-timestamp']).toBe('1795888800')
    expect(headers['webhook-signature']).toBe(`v1,${expected}`)
  })

  it('during a rotation carries one signature per secret, current first, and either secret verifies it', () => {
    const current = newWebhookSecret()
    const previous = newWebhookSecret()
    const at = new Date()
    const headers = signDelivery(EVENT_ID, BODY, [current, previous], at)
    const signatures = headers['webhook-signature'].split(' ')
    expect(signatures).toEqual([
      new Webhook(current).sign(EVENT_ID, at, BODY),
      new Webhook(previous).sign(EVENT_ID, at, BODY),
    ])
    expect(new Webhook(current).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY))
    expect(new Webhook(previous).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY))
  })

  it('does not verify under another secret, with another body or another id', () => {
    const secret = newWebhookSecret()
    const headers = { ...signDelivery(EVENT_ID, BODY, [secret], new Date()) }
    const refused = (check: () => unknown) => expect(check).toThrow(WebhookVerificationError)
    refused(() => new Webhook(newWebhookSecret()).verify(BODY, headers))
    refused(() => new Webhook(secret).verify(BODY.replace('printed', 'failed'), headers))
    refused(() => new Webhook(secret).verify(BODY, { ...headers, 'webhook-id': 'another' }))
  })

  it('stamps the attempt’s time, which receivers hold to five minutes', () => {
    const secret = newWebhookSecret()
    const stale = signDelivery(EVENT_ID, BODY, [secret], new Date(Date.now() - 6 * 60_000))
    expect(() => new Webhook(secret).verify(BODY, { ...stale })).toThrow('Message timestamp too old')
  })

  it('refuses to sign without a secret', () => {
    expect(() => signDelivery(EVENT_ID, BODY, [], new Date())).toThrow('at least one secret')
  })
})

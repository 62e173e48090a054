import { createHmac, createPublicKey, randomUUID } from 'node:crypto'
import { exportJWK, exportSPKI } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applicationKeyFrom } from '../../../cloud/developer/public-keys.ts'
import type { ErrorCode } from '../../../protocol/errors.ts'
import { bearer, expectInjectedError } from '../api/api-helpers.ts'
import { startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import { registerApplication, rsaKeyPair, signAssertion, type TestApplication } from './applications.ts'

const CHALLENGE = /^Bearer realm="print-hub", error="invalid_token", error_description="[^"\\]+"$/

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('application assertions (spec: Authentication, model 2)', () => {
  let cloud: TestCloud
  let app: TestApplication
  let account: TestAccount
  let installationId: string
  const url = () => `/developer-api/v1/app-installations/${installationId}/access-tokens`

  beforeAll(async () => {
    cloud = await startTestCloud()
    app = await registerApplication(cloud.storage, cloud.config.publicUrl)
    account = await cloud.createAccount()
    installationId = (
      await cloud.storage.applications.install(app.appId, account.accountId, ['printers:read'])
    ).installation_id
  })
  afterAll(() => cloud?.close())

  const post = (authorization: string | undefined) =>
    cloud.app.inject({
      method: 'POST',
      url: url(),
      headers: authorization === undefined ? {} : { authorization },
    })

  /** A 401 with the error body of `code` and an RFC 6750 challenge. */
  async function expectRefused(authorization: string | undefined, code: ErrorCode = 'assertion_invalid') {
    const res = await post(authorization)
    expectInjectedError(res, code)
    expect(res.headers['www-authenticate']).toMatch(CHALLENGE)
    return res
  }

  it('accepts a fresh assertion once', async () => {
    const res = await post(`Bearer ${await app.assertion()}`)
    expect(res.statusCode, res.body).toBe(200)
  })

  it('missing: 401 with the bare challenge', async () => {
    const res = await post(undefined)
    expectInjectedError(res, 'assertion_invalid')
    expect(res.headers['www-authenticate']).toBe('Bearer realm="print-hub"')
  })

  it('expired: 401', async () => {
    const past = Math.floor(Date.now() / 1000) - 400
    await expectRefused(`Bearer ${await app.assertion({ iat: past - 200, exp: past })}`)
  })

  it('future-dated (iat beyond the 60 s skew): 401', async () => {
    const future = Math.floor(Date.now() / 1000) + 300
    await expectRefused(`Bearer ${await app.assertion({ iat: future, exp: future + 300 })}`)
  })

  it('accepts iat within the 60 s skew', async () => {
    const soon = Math.floor(Date.now() / 1000) + 30
    expect((await post(`Bearer ${await app.assertion({ iat: soon, exp: soon + 300 })}`)).statusCode).toBe(200)
  })

  it('exp more than 10 minutes after iat: 401', async () => {
    const now = Math.floor(Date.now() / 1000)
    await expectRefused(`Bearer ${await app.assertion({ iat: now, exp: now + 601 })}`)
  })

  it('missing iat, exp or jti: 401 each', async () => {
    for (const claim of ['iat', 'exp', 'jti']) {
      await expectRefused(`Bearer ${await app.assertion({ [claim]: undefined })}`)
    }
  })

  it('wrong audience: 401', async () => {
    await expectRefused(`Bearer ${await app.assertion({ aud: 'https://other.example' })}`)
  })

  it('unknown issuer: 401', async () => {
    await expectRefused(`Bearer ${await app.assertion({ iss: randomUUID() })}`)
  })

  it('signed by a key the application never registered: 401', async () => {
    const stranger = await rsaKeyPair()
    await expectRefused(
      `Bearer ${await signAssertion(stranger.privateKey, {}, { iss: app.appId, aud: cloud.config.publicUrl })}`,
    )
    await expectRefused(
      `Bearer ${await signAssertion(stranger.privateKey, { kid: app.kid }, { iss: app.appId, aud: cloud.config.publicUrl })}`,
    )
  })

  it('a kid naming no key of the application: 401', async () => {
    await expectRefused(`Bearer ${await app.assertion({}, { kid: 'no-such-key' })}`)
  })

  it('alg none: 401', async () => {
    const now = Math.floor(Date.now() / 1000)
    const claims = {
      iss: app.appId,
      aud: cloud.config.publicUrl,
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
    }
    await expectRefused(`Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`)
  })

  it('HS256 keyed with the public key (algorithm confusion): 401', async () => {
    const now = Math.floor(Date.now() / 1000)
    const claims = {
      iss: app.appId,
      aud: cloud.config.publicUrl,
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
    }
    const signingInput = `${b64url({ alg: 'HS256', typ: 'JWT', kid: app.kid })}.${b64url(claims)}`
    const spki = await exportSPKI(app.keys.publicKey)
    for (const secret of [spki, JSON.stringify(await exportJWK(app.keys.publicKey))]) {
      const signature = createHmac('sha256', secret).update(signingInput).digest('base64url')
      await expectRefused(`Bearer ${signingInput}.${signature}`)
    }
  })

  it('reused: 401 assertion_replayed', async () => {
    const assertion = await app.assertion()
    expect((await post(`Bearer ${assertion}`)).statusCode).toBe(200)
    await expectRefused(`Bearer ${assertion}`, 'assertion_replayed')
    // The same jti in another assertion is the same assertion used twice.
    const jti = randomUUID()
    expect((await post(`Bearer ${await app.assertion({ jti })}`)).statusCode).toBe(200)
    await expectRefused(`Bearer ${await app.assertion({ jti })}`, 'assertion_replayed')
  })

  it('a refused assertion does not spend its jti', async () => {
    const jti = randomUUID()
    await expectRefused(`Bearer ${await app.assertion({ jti, aud: 'https://other.example' })}`)
    expect((await post(`Bearer ${await app.assertion({ jti })}`)).statusCode).toBe(200)
  })

  it('garbage and an account access token: 401', async () => {
    await expectRefused('Bearer not-a-jwt')
    await expectRefused('Basic dXNlcjpwYXNz')
    await expectRefused(bearer(await account.token()).authorization)
  })

  it('an assertion sent to /api/v1: 401 invalid_token with a challenge', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/printers',
      headers: bearer(await app.assertion()),
    })
    expectInjectedError(res, 'invalid_token')
    expect(res.headers['www-authenticate']).toMatch(CHALLENGE)
    expect(res.json().message).toContain('application assertion')
  })

  it('key rotation: a second key is chosen by kid, or tried in turn without one', async () => {
    const next = await rsaKeyPair()
    const key = await applicationKeyFrom(
      JSON.stringify({ ...(await exportJWK(next.publicKey)), kid: 'key-2' }),
    )
    expect(key.kid).toBe('key-2')
    expect(await cloud.storage.applications.addKey(app.appId, key)).toBe(true)
    const claims = { iss: app.appId, aud: cloud.config.publicUrl }
    for (const header of [{ kid: 'key-2' }, {}]) {
      const res = await post(`Bearer ${await signAssertion(next.privateKey, header, claims)}`)
      expect(res.statusCode, res.body).toBe(200)
    }
    // The first key still works beside it.
    expect((await post(`Bearer ${await app.assertion()}`)).statusCode).toBe(200)
    // The new key's kid with the old key's signature is refused (the kid picks the key).
    await expectRefused(`Bearer ${await app.assertion({}, { kid: 'key-2' })}`)
  })

  it('registers keys from PEM and JWK alike, and refuses private and weak keys', async () => {
    const pair = await rsaKeyPair()
    const pem = await exportSPKI(pair.publicKey)
    const fromPem = await applicationKeyFrom(pem)
    const fromJwk = await applicationKeyFrom(JSON.stringify(await exportJWK(pair.publicKey)))
    expect(fromPem).toStrictEqual(fromJwk)
    expect(fromPem.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const pkcs1 = createPublicKey(pem).export({ type: 'pkcs1', format: 'pem' }).toString()
    expect((await applicationKeyFrom(pkcs1)).kid).toBe(fromPem.kid)
    const privateJwk = await exportJWK(pair.privateKey)
    await expect(applicationKeyFrom(JSON.stringify(privateJwk))).rejects.toThrow('private key')
    await expect(
      applicationKeyFrom('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----'),
    ).rejects.toThrow('private key')
    const { generateKeyPairSync } = await import('node:crypto')
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    })
    await expect(applicationKeyFrom(weak.toString())).rejects.toThrow('at least 2048')
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    })
    await expect(applicationKeyFrom(ec.toString())).rejects.toThrow('RSA')
  })
})

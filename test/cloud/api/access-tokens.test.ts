import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  exportJWK,
  type JSONWebKeySet,
  jwtVerify,
} from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.ts'
import { ACCESS_TOKEN_KEY_FILE, accessTokenSigningKey } from '../../../cloud/auth/access-token-key.ts'
import { ConfigError, loadConfig } from '../../../cloud/config.ts'
import { createBlobStore } from '../../../cloud/storage/blob-store.ts'
import { openStorage } from '../../../cloud/storage/storage.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { ALL_SCOPES, startTestCloud, type TestCloud } from '../test-cloud.ts'
import { bearer, expectInjectedError } from './api-helpers.ts'

// The cloud's access tokens are RFC 9068 JWTs signed EdDSA (RFC 8037), checked against
// GET /.well-known/jwks.json (RFC 7517); the cloud itself still checks them by their stored digest.

const ISSUER = 'http://127.0.0.1:8080' // startTestCloud's PUBLIC_URL
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

const clouds: TestCloud[] = []
const dirs: { remove(): void }[] = []
afterEach(async () => {
  for (const cloud of clouds.splice(0)) await cloud.close()
  for (const dir of dirs.splice(0)) dir.remove()
})

async function start(options: Parameters<typeof startTestCloud>[0] = {}) {
  const cloud = await startTestCloud(options)
  clouds.push(cloud)
  return cloud
}

async function tokenFor(cloud: TestCloud, clientId: string, clientSecret: string, scope?: string) {
  const res = await cloud.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: FORM,
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      ...(scope && { scope }),
    }).toString(),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().access_token as string
}

async function keySet(cloud: TestCloud): Promise<JSONWebKeySet> {
  const res = await cloud.app.inject({ url: '/.well-known/jwks.json' })
  expect(res.statusCode).toBe(200)
  return res.json()
}

const ed25519Pem = () =>
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

describe('GET /.well-known/jwks.json', () => {
  it('publishes the Ed25519 public key, named by its RFC 7638 thumbprint, without credentials', async () => {
    const cloud = await start()
    const res = await cloud.app.inject({ url: '/.well-known/jwks.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('public, max-age=300')
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const body = res.json() as { keys: Record<string, string>[] }
    expect(body).toStrictEqual({
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          kid: expect.any(String),
          alg: 'EdDSA',
          use: 'sig',
        },
      ],
    })
    const key = body.keys[0]!
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: key.x }))
  })
})

describe('POST /oauth/token issues a signed JWT', () => {
  it('with the RFC 9068 header and claims, verifiable with the published keys', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const before = Math.floor(Date.now() / 1000)
    const token = await tokenFor(cloud, shop.clientId, shop.clientSecret, 'print_jobs:write printers:read')
    const after = Math.floor(Date.now() / 1000)
    const jwks = await keySet(cloud)
    expect(decodeProtectedHeader(token)).toStrictEqual({
      alg: 'EdDSA',
      typ: 'at+jwt',
      kid: jwks.keys[0]!.kid,
    })
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
      algorithms: ['EdDSA'],
      typ: 'at+jwt',
      issuer: ISSUER,
    })
    expect(payload).toStrictEqual({
      iss: ISSUER,
      aud: ISSUER,
      sub: shop.clientId,
      client_id: shop.clientId,
      account_id: shop.accountId,
      scope: 'print_jobs:write printers:read',
      jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), // 128 random bits
      iat: expect.any(Number),
      exp: expect.any(Number),
    })
    expect(payload.iat).toBeGreaterThanOrEqual(before)
    expect(payload.iat).toBeLessThanOrEqual(after)
    expect(payload.exp).toBe((payload.iat as number) + 3600)
    const again = await tokenFor(cloud, shop.clientId, shop.clientSecret)
    expect(again).not.toBe(token)
    expect((await jwtVerify(again, createLocalJWKSet(jwks))).payload.scope).toBe(ALL_SCOPES.join(' '))
  })

  it('which works on /api/v1 until its client is revoked, then is refused at once (401)', async () => {
    const cloud = await start()
    const shop = await cloud.createAccount()
    const token = await tokenFor(cloud, shop.clientId, shop.clientSecret)
    const printers = () => cloud.app.inject({ url: '/api/v1/printers', headers: bearer(token) })
    expect((await printers()).statusCode).toBe(200)
    await cloud.storage.apiClients.revoke(shop.clientId, new Date())
    expectInjectedError(await printers(), 'invalid_token')
  })

  it('which lasts ACCESS_TOKEN_TTL_SECONDS (exp − iat)', async () => {
    const cloud = await start({ env: { ACCESS_TOKEN_TTL_SECONDS: '60' } })
    const shop = await cloud.createAccount()
    const token = await tokenFor(cloud, shop.clientId, shop.clientSecret)
    const { payload } = await jwtVerify(token, createLocalJWKSet(await keySet(cloud)))
    expect((payload.exp as number) - (payload.iat as number)).toBe(60)
  })
})

describe('the signing key', () => {
  it('is made once in DATA_DIR with mode 0600 and kept across restarts', async () => {
    const dir = tempDir('cloud-key-')
    dirs.push(dir)
    const first = await start({ dataDir: dir.path })
    const file = path.join(dir.path, ACCESS_TOKEN_KEY_FILE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const pem = readFileSync(file, 'utf8')
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/)
    const shop = await first.createAccount()
    const token = await tokenFor(first, shop.clientId, shop.clientSecret)
    const keysBefore = await keySet(first)
    await first.close()
    clouds.splice(0)

    const restarted = await start({ dataDir: dir.path })
    expect(readFileSync(file, 'utf8')).toBe(pem)
    expect(await keySet(restarted)).toStrictEqual(keysBefore)
    await expect(jwtVerify(token, createLocalJWKSet(await keySet(restarted)))).resolves.toBeDefined()
  })

  it('is ACCESS_TOKEN_SIGNING_KEY when set (base64 of the PKCS#8 PEM); no key file is made', async () => {
    const pem = ed25519Pem()
    const cloud = await start({ env: { ACCESS_TOKEN_SIGNING_KEY: Buffer.from(pem).toString('base64') } })
    const { x } = await exportJWK(generateKeyPairSync('ed25519').publicKey)
    const expected = await exportJWK(createPublicKey(createPrivateKey(pem)))
    const jwks = await keySet(cloud)
    expect(jwks.keys[0]?.x).toBe(expected.x)
    expect(jwks.keys[0]?.x).not.toBe(x)
    expect(() => statSync(path.join(cloud.dataDir, ACCESS_TOKEN_KEY_FILE))).toThrow(/ENOENT/)
  })

  it.each([
    ['not a key', Buffer.from('hello').toString('base64')],
    [
      'an RSA key',
      Buffer.from(
        generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
          type: 'pkcs8',
          format: 'pem',
        }),
      ).toString('base64'),
    ],
    ['a truncated key', Buffer.from(ed25519Pem().slice(0, 60)).toString('base64')],
  ])('that is %s stops start-up with a message naming ACCESS_TOKEN_SIGNING_KEY', async (_, value) => {
    const dir = tempDir('cloud-key-')
    dirs.push(dir)
    const config = loadConfig({ DATA_DIR: dir.path, ACCESS_TOKEN_SIGNING_KEY: value })
    const storage = await openStorage({ dataDir: config.dataDir })
    try {
      await expect(buildApp({ config, storage, blobs: createBlobStore(config.dataDir) })).rejects.toThrow(
        'ACCESS_TOKEN_SIGNING_KEY must be an Ed25519 private key, PKCS#8 PEM in base64 ' +
          '(openssl genpkey -algorithm ed25519 | base64 -w0)',
      )
    } finally {
      await storage.close()
    }
  })

  it('that is not base64 is refused with the configuration', () => {
    const dir = tempDir('cloud-key-')
    dirs.push(dir)
    const attempt = () => loadConfig({ DATA_DIR: dir.path, ACCESS_TOKEN_SIGNING_KEY: ed25519Pem() })
    expect(attempt).toThrow(ConfigError)
    expect(attempt).toThrow(/ACCESS_TOKEN_SIGNING_KEY/)
  })

  it('in a damaged key file stops start-up with a message naming the file', () => {
    const dir = tempDir('cloud-key-')
    dirs.push(dir)
    const file = path.join(dir.path, ACCESS_TOKEN_KEY_FILE)
    writeFileSync(file, 'garbage', { mode: 0o600 })
    expect(() => accessTokenSigningKey(undefined, dir.path)).toThrow(
      `${file} does not hold an Ed25519 private key in PKCS#8 PEM`,
    )
  })
})

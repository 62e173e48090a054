import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { HUB_TOKEN_KEY_FILE } from '../../../hub/lan/hub-token-key.ts'
import {
  DEFAULT_MAX_OFFLINE_MS,
  LAN_CREDENTIALS_FILE,
  LanCredentials,
  type LanCredentialsOptions,
} from '../../../hub/lan/lan-credentials.ts'
import type { Scope } from '../../../protocol/enums.ts'
import type { LanCredentialsDocument } from '../../../protocol/lan-credentials.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { type SigningKey, signCloudToken, signingKey, type TokenOptions } from './cloud-tokens.ts'

// The hub's offline check of its account's API credentials (hub/lan/lan-credentials.ts), with real Ed25519 keys.

const ISSUER = 'https://print.example.com'
const ACCOUNT = randomUUID()
const AGENT = randomUUID()
const TILL = randomUUID()
const TILL_SECRET = 'cs_till-secret-of-256-random-bits-in-base64url-0000000'
const TILL_SCOPES: Scope[] = ['printers:read', 'print_jobs:write', 'print_jobs:read']
const OFFICE = randomUUID()
const NOW = Date.parse('2026-11-28T21:00:00Z')
const MINUTE = 60_000

function documentWith(key: SigningKey, clients = [TILL, OFFICE]): LanCredentialsDocument {
  const known: Record<string, LanCredentialsDocument['clients'][number]> = {
    [TILL]: { client_id: TILL, scopes: TILL_SCOPES, secret_sha256: sha256(TILL_SECRET) },
    [OFFICE]: { client_id: OFFICE, scopes: ['printers:read'], secret_sha256: sha256('cs_office') },
  }
  return {
    lan_api_enabled: true,
    printers: [],
    issuer: ISSUER,
    token_keys: { keys: [key.jwk] },
    clients: clients.map((id) => known[id]!),
    access_token_ttl_seconds: 3600,
    generated_at: new Date(NOW).toISOString(),
  }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** A token of the till's client as the cloud signs it, at NOW unless told. */
const cloudToken = (options: Omit<TokenOptions, 'issuer' | 'clientId' | 'accountId'>) =>
  signCloudToken({ issuer: ISSUER, clientId: TILL, accountId: ACCOUNT, issuedAt: NOW, ...options })

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

const dirs: { remove(): void }[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

/** A hub's LanCredentials in a fresh state directory, holding `document` fetched at NOW. */
async function hubWith(
  document: LanCredentialsDocument | null,
  options: Partial<LanCredentialsOptions> = {},
) {
  const dir = tempDir('lan-credentials-')
  dirs.push(dir)
  const lan = new LanCredentials({ dataDir: dir.path, agentId: AGENT, accountId: ACCOUNT, ...options })
  if (document) await lan.refresh(async () => document, NOW)
  return { lan, dir: dir.path }
}

describe('a token the cloud issued', () => {
  it('is accepted with its scopes, and the client it names', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const token = await cloudToken({ key: cloud })
    expect(await lan.verifyBearer(token, NOW + MINUTE)).toStrictEqual({
      clientId: TILL,
      scopes: ['print_jobs:write', 'printers:read'],
    })
  })

  it('is refused as expired once exp is more than 60 s past, and accepted within those 60 s', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const token = await cloudToken({ key: cloud, ttlSeconds: 600 })
    expect(await lan.verifyBearer(token, NOW + 600_000 + 59_000)).toMatchObject({ clientId: TILL })
    expect(await lan.verifyBearer(token, NOW + 600_000 + 61_000)).toStrictEqual({ refused: 'expired' })
  })

  it('is refused when another key signed it, even one naming the published kid', async () => {
    const cloud = await signingKey()
    const other = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const forged = await cloudToken({ key: { ...other, jwk: cloud.jwk } })
    expect(await lan.verifyBearer(forged, NOW)).toStrictEqual({ refused: 'invalid_token' })
    const unknownKid = await cloudToken({ key: other })
    expect(await lan.verifyBearer(unknownKid, NOW)).toStrictEqual({ refused: 'invalid_token' })
  })

  it('is refused unless alg is EdDSA: none, and HS256 keyed with the public key', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const iat = Math.floor(NOW / 1000)
    const claims = {
      iss: ISSUER,
      aud: ISSUER,
      sub: TILL,
      client_id: TILL,
      account_id: ACCOUNT,
      scope: 'print_jobs:write',
      jti: randomUUID(),
      iat,
      exp: iat + 3600,
    }
    const unsecured = `${base64url({ alg: 'none', typ: 'at+jwt' })}.${base64url(claims)}.`
    expect(await lan.verifyBearer(unsecured, NOW)).toStrictEqual({ refused: 'invalid_token' })
    const publicPem = Buffer.from(
      generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    )
    for (const secret of [
      Buffer.from(cloud.jwk.x, 'base64url'),
      Buffer.from(JSON.stringify(cloud.jwk)),
      publicPem,
    ]) {
      const hs256 = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: cloud.jwk.kid })
        .sign(secret)
      expect(await lan.verifyBearer(hs256, NOW)).toStrictEqual({ refused: 'invalid_token' })
    }
  })

  it('is refused when its typ is not at+jwt, or its issuer is not the document’s', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const plainJwt = await cloudToken({ key: cloud, header: { typ: 'JWT' } })
    expect(await lan.verifyBearer(plainJwt, NOW)).toStrictEqual({ refused: 'invalid_token' })
    const elsewhere = await new SignJWT({ client_id: TILL, account_id: ACCOUNT, scope: 'printers:read' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: cloud.jwk.kid })
      .setIssuer('https://other.example.com')
      .setAudience('https://other.example.com')
      .setSubject(TILL)
      .setJti(randomUUID())
      .setIssuedAt(Math.floor(NOW / 1000))
      .setExpirationTime(Math.floor(NOW / 1000) + 3600)
      .sign(cloud.privateKey)
    expect(await lan.verifyBearer(elsewhere, NOW)).toStrictEqual({ refused: 'invalid_token' })
    expect(await lan.verifyBearer('not a token', NOW)).toStrictEqual({ refused: 'invalid_token' })
  })

  it('is refused when it is for another account', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const token = await cloudToken({ key: cloud, claims: { account_id: randomUUID() } })
    expect(await lan.verifyBearer(token, NOW)).toStrictEqual({ refused: 'invalid_token' })
  })

  it('is refused once a later document no longer lists its client (revoked)', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const token = await cloudToken({ key: cloud })
    expect(await lan.verifyBearer(token, NOW)).toMatchObject({ clientId: TILL })
    await lan.refresh(async () => documentWith(cloud, [OFFICE]), NOW + MINUTE)
    expect(await lan.verifyBearer(token, NOW + MINUTE)).toStrictEqual({ refused: 'unknown_client' })
  })

  it('is refused as stale once maxOfflineMs has passed since the last fetch, until the next fetch', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud), { maxOfflineMs: 10 * MINUTE })
    const token = await cloudToken({ key: cloud })
    expect(await lan.verifyBearer(token, NOW + 10 * MINUTE)).toMatchObject({ clientId: TILL })
    expect(await lan.verifyBearer(token, NOW + 10 * MINUTE + 1)).toStrictEqual({ refused: 'stale' })
    await lan.refresh(async () => documentWith(cloud), NOW + 11 * MINUTE)
    expect(await lan.verifyBearer(token, NOW + 11 * MINUTE)).toMatchObject({ clientId: TILL })
  })

  it('is refused as stale by default 72 hours after the last fetch, and by a hub that never fetched', async () => {
    expect(DEFAULT_MAX_OFFLINE_MS).toBe(72 * 3600_000)
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const token = await cloudToken({ key: cloud, ttlSeconds: 80 * 3600 })
    expect(await lan.verifyBearer(token, NOW + DEFAULT_MAX_OFFLINE_MS)).toMatchObject({ clientId: TILL })
    expect(await lan.verifyBearer(token, NOW + DEFAULT_MAX_OFFLINE_MS + 1)).toStrictEqual({
      refused: 'stale',
    })
    const { lan: fresh } = await hubWith(null)
    expect(fresh.fetchedAt).toBeNull()
    expect(await fresh.verifyBearer(token, NOW)).toStrictEqual({ refused: 'stale' })
    expect(await fresh.issueToken(TILL, TILL_SECRET, undefined, NOW)).toStrictEqual({ refused: 'stale' })
  })
})

describe("the hub's own token grant", () => {
  it('gives a token for the right secret, with every scope of the client, that this hub accepts', async () => {
    const { lan } = await hubWith(documentWith(await signingKey()))
    const grant = await lan.issueToken(TILL, TILL_SECRET, undefined, NOW)
    expect(grant).toStrictEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: TILL_SCOPES.join(' '),
    })
    if (!('access_token' in grant)) throw new Error('refused')
    expect(decodeProtectedHeader(grant.access_token)).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt' })
    const claims = decodeJwt(grant.access_token)
    expect(claims).toMatchObject({
      iss: `hub:${AGENT}`,
      sub: TILL,
      client_id: TILL,
      account_id: ACCOUNT,
      iat: NOW / 1000,
      exp: NOW / 1000 + 3600,
    })
    expect(await lan.verifyBearer(grant.access_token, NOW + MINUTE)).toStrictEqual({
      clientId: TILL,
      scopes: TILL_SCOPES,
    })
    expect(await lan.verifyBearer(grant.access_token, NOW + 3661_000)).toStrictEqual({ refused: 'expired' })
  })

  it('grants the requested subset of scopes, and refuses a scope outside the client’s', async () => {
    const { lan } = await hubWith(documentWith(await signingKey()))
    const subset = await lan.issueToken(TILL, TILL_SECRET, 'print_jobs:write', NOW)
    expect(subset).toMatchObject({ scope: 'print_jobs:write' })
    if (!('access_token' in subset)) throw new Error('refused')
    expect(await lan.verifyBearer(subset.access_token, NOW)).toStrictEqual({
      clientId: TILL,
      scopes: ['print_jobs:write'],
    })
    for (const scope of ['print_jobs:write webhooks:write', 'no:such-scope']) {
      expect(await lan.issueToken(TILL, TILL_SECRET, scope, NOW)).toStrictEqual({ refused: 'invalid_scope' })
    }
  })

  it('refuses a wrong secret, another client’s secret and an unknown client', async () => {
    const { lan } = await hubWith(documentWith(await signingKey()))
    expect(await lan.issueToken(TILL, `${TILL_SECRET}x`, undefined, NOW)).toStrictEqual({
      refused: 'invalid_client',
    })
    expect(await lan.issueToken(TILL, 'cs_office', undefined, NOW)).toStrictEqual({
      refused: 'invalid_client',
    })
    expect(await lan.issueToken(randomUUID(), TILL_SECRET, undefined, NOW)).toStrictEqual({
      refused: 'invalid_client',
    })
  })

  it('is accepted by this hub only, and refused once its client is revoked', async () => {
    const cloud = await signingKey()
    const { lan } = await hubWith(documentWith(cloud))
    const { lan: otherHub } = await hubWith(documentWith(cloud), { agentId: randomUUID() })
    const grant = await lan.issueToken(TILL, TILL_SECRET, undefined, NOW)
    if (!('access_token' in grant)) throw new Error('refused')
    expect(await otherHub.verifyBearer(grant.access_token, NOW)).toStrictEqual({ refused: 'invalid_token' })
    // Another hub's token carrying this hub's issuer: signed with the other hub's key.
    const { lan: impostor } = await hubWith(documentWith(cloud))
    const forged = await impostor.issueToken(TILL, TILL_SECRET, undefined, NOW)
    if (!('access_token' in forged)) throw new Error('refused')
    expect(await lan.verifyBearer(forged.access_token, NOW)).toStrictEqual({ refused: 'invalid_token' })
    await lan.refresh(async () => documentWith(cloud, [OFFICE]), NOW + MINUTE)
    expect(await lan.verifyBearer(grant.access_token, NOW + MINUTE)).toStrictEqual({
      refused: 'unknown_client',
    })
    expect(await lan.issueToken(TILL, TILL_SECRET, undefined, NOW + MINUTE)).toStrictEqual({
      refused: 'invalid_client',
    })
  })
})

describe('the kept document', () => {
  it('survives a restart: a new instance on the same directory checks the same credentials', async () => {
    const cloud = await signingKey()
    const { lan, dir } = await hubWith(documentWith(cloud))
    const grant = await lan.issueToken(TILL, TILL_SECRET, undefined, NOW)
    if (!('access_token' in grant)) throw new Error('refused')
    for (const file of [LAN_CREDENTIALS_FILE, HUB_TOKEN_KEY_FILE]) {
      expect(statSync(path.join(dir, file)).mode & 0o777, file).toBe(0o600)
    }
    const restarted = new LanCredentials({ dataDir: dir, agentId: AGENT, accountId: ACCOUNT })
    expect(restarted.fetchedAt).toBe(NOW)
    expect(await restarted.verifyBearer(await cloudToken({ key: cloud }), NOW)).toMatchObject({
      clientId: TILL,
    })
    expect(await restarted.verifyBearer(grant.access_token, NOW)).toStrictEqual({
      clientId: TILL,
      scopes: TILL_SCOPES,
    })
  })

  it('is not replaced by an answer that fails the protocol schema', async () => {
    const cloud = await signingKey()
    const { lan, dir } = await hubWith(documentWith(cloud))
    const before = readFileSync(path.join(dir, LAN_CREDENTIALS_FILE), 'utf8')
    const { clients: _, ...withoutClients } = documentWith(cloud, [])
    const bad: unknown[] = [
      withoutClients,
      { ...documentWith(cloud, []), token_keys: { keys: [{ ...cloud.jwk, alg: 'HS256' }] } },
      { ...documentWith(cloud), clients: [{ client_id: TILL, scopes: TILL_SCOPES, secret_sha256: 'nope' }] },
      null,
    ]
    for (const answer of bad) {
      await expect(lan.refresh(async () => answer, NOW + MINUTE)).rejects.toThrow(
        /does not match the protocol/,
      )
    }
    expect(lan.fetchedAt).toBe(NOW)
    expect(readFileSync(path.join(dir, LAN_CREDENTIALS_FILE), 'utf8')).toBe(before)
    expect(await lan.verifyBearer(await cloudToken({ key: cloud }), NOW)).toMatchObject({ clientId: TILL })
    const restarted = new LanCredentials({ dataDir: dir, agentId: AGENT, accountId: ACCOUNT })
    expect(restarted.fetchedAt).toBe(NOW)
  })
})

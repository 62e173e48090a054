import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import {
  createLocalJWKSet,
  decodeJwt,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
  SignJWT,
} from 'jose'
import { type Static, Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { hashSecret, secretMatches } from '../../print-api/secrets.ts'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { type LanClient, LanCredentialsDocument } from '../../protocol/lan-credentials.ts'
import type { TokenResponse } from '../../protocol/oauth.ts'
import { writeStateFile } from '../state-file.ts'
import { type HubTokenKey, hubTokenKey } from './hub-token-key.ts'

export const LAN_CREDENTIALS_FILE = 'lan-credentials.json'

/** 72 hours: how long a hub cut off from the cloud goes on trusting the credentials it last fetched. */
export const DEFAULT_MAX_OFFLINE_MS = 72 * 3600_000

/** Lifetime of a token the hub issues when the document does not say (the cloud's ACCESS_TOKEN_TTL_SECONDS default). */
const DEFAULT_TOKEN_TTL_SECONDS = 3600

/** Clock skew allowed between the cloud and the hub when checking `exp` (RFC 7519 §4.1.4). */
const CLOCK_TOLERANCE_SECONDS = 60

export interface LanCredentialsOptions {
  /** The hub's state directory: the last document and the hub's own signing key are kept there. */
  dataDir: string
  agentId: string
  /** The hub's account: only its clients' credentials are accepted. */
  accountId: string
  /** After this long without a fetch every credential is refused as `stale`; 72 hours by default. */
  maxOfflineMs?: number
}

/** Why a credential was refused. `stale`: the hub has not fetched the document for too long, or ever. */
export type LanRefusal = 'invalid_token' | 'expired' | 'unknown_client' | 'stale'
export type LanBearer = { clientId: string; scopes: Scope[] } | { refused: LanRefusal }
export type LanTokenGrant = TokenResponse | { refused: 'invalid_client' | 'invalid_scope' | 'stale' }

/** What is kept on disk: the latest document and when it was fetched (epoch milliseconds). */
const KeptDocument = Type.Object({
  fetched_at: Type.Integer({ minimum: 0 }),
  document: LanCredentialsDocument,
})
type KeptDocument = Static<typeof KeptDocument>
const checkKept = Compile(KeptDocument)
const checkDocument = Compile(LanCredentialsDocument)

/** An unknown client is compared against this, so that it takes as long as a wrong secret. */
const NO_CLIENT_DIGEST = hashSecret('').toString('hex')

/**
 * Checks, without the cloud, the credentials of the hub's account's API clients for the print API the hub
 * serves on its LAN: access tokens the cloud issued (RFC 9068 JWTs, checked with the cloud's published keys,
 * RFC 7517), and tokens this hub issued itself from a client's id and secret (its own client credentials grant,
 * for when a till's cloud token expires during a long outage).
 *
 * What it trusts is the latest document from GET /agent-api/v1/lan-credentials, kept on disk so that a hub
 * rebooted during an outage still checks credentials. What a revoked credential can still do offline: a client
 * revoked while this hub cannot reach the cloud keeps printing on this hub's LAN, with its secret and with its
 * cloud tokens until they expire, until the hub fetches the document again (it does on reconnecting) or until
 * `maxOfflineMs` after the last fetch, when the hub refuses every credential as `stale`. A client revoked before
 * the last fetch is refused at once.
 */
export class LanCredentials {
  readonly #file: string
  readonly #maxOfflineMs: number
  #kept: KeptDocument | null
  #cloudKeys: JWTVerifyGetKey | null = null
  #hubKey: Promise<HubTokenKey> | null = null

  constructor(private readonly options: LanCredentialsOptions) {
    this.#file = path.join(options.dataDir, LAN_CREDENTIALS_FILE)
    this.#maxOfflineMs = options.maxOfflineMs ?? DEFAULT_MAX_OFFLINE_MS
    this.#kept = this.#load()
  }

  /** When the kept document was fetched (epoch milliseconds), or null when the hub never fetched one. */
  get fetchedAt(): number | null {
    return this.#kept?.fetched_at ?? null
  }

  /** The document kept (the LAN API's switch and the hub's printers as the cloud shows them), or null. */
  get document(): LanCredentialsDocument | null {
    return this.#kept?.document ?? null
  }

  /**
   * Fetches the document (`fetch` GETs /agent-api/v1/lan-credentials with the hub's credential, e.g.
   * CloudClient.lanCredentials) and keeps it if it matches the protocol; throws otherwise, keeping the last one.
   */
  async refresh(fetch: () => Promise<unknown>, nowMs = Date.now()): Promise<void> {
    const document = await fetch()
    if (!checkDocument.Check(document)) {
      const first = checkDocument.Errors(document)[0]
      throw new Error(
        `the lan-credentials document does not match the protocol (${first?.instancePath || '/'} ${first?.message ?? ''})`,
      )
    }
    this.#keep({ fetched_at: nowMs, document })
  }

  /** Checks an `Authorization: Bearer` token: one the cloud issued to a client of this account, or this hub did. */
  async verifyBearer(token: string, nowMs: number): Promise<LanBearer> {
    const kept = this.#current(nowMs)
    if (!kept) return { refused: 'stale' }
    let issuer: unknown
    try {
      issuer = decodeJwt(token).iss
    } catch {
      return { refused: 'invalid_token' }
    }
    const checks = {
      algorithms: ['EdDSA'],
      typ: 'at+jwt',
      issuer: String(issuer),
      audience: String(issuer),
      requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(nowMs),
    }
    let claims: JWTPayload
    try {
      if (issuer === kept.document.issuer) {
        claims = (await jwtVerify(token, this.#cloudKeySet(kept), checks)).payload
      } else if (issuer === this.#ownIssuer()) {
        claims = (await jwtVerify(token, (await this.#ownKey()).publicKey, checks)).payload
      } else {
        return { refused: 'invalid_token' }
      }
    } catch (error) {
      return { refused: error instanceof errors.JWTExpired ? 'expired' : 'invalid_token' }
    }
    if (claims.account_id !== this.options.accountId || claims.sub !== claims.client_id) {
      return { refused: 'invalid_token' }
    }
    const client = kept.document.clients.find((c) => c.client_id === claims.client_id)
    if (!client) return { refused: 'unknown_client' }
    // The token's scopes, as far as the client still has them.
    const scopes = (typeof claims.scope === 'string' ? claims.scope.split(' ') : []).filter((s): s is Scope =>
      client.scopes.includes(s as Scope),
    )
    return { clientId: client.client_id, scopes }
  }

  /**
   * The hub's own client credentials grant (RFC 6749 §4.4), answered as /oauth/token answers: the client's
   * scopes, or the requested subset of them (§3.3), in a token signed with the hub's own key.
   */
  async issueToken(
    clientId: string,
    clientSecret: string,
    requestedScope: string | undefined,
    nowMs: number,
  ): Promise<LanTokenGrant> {
    const kept = this.#current(nowMs)
    if (!kept) return { refused: 'stale' }
    const client: LanClient | undefined = kept.document.clients.find((c) => c.client_id === clientId)
    if (
      !secretMatches(clientSecret, Buffer.from(client?.secret_sha256 ?? NO_CLIENT_DIGEST, 'hex')) ||
      !client
    ) {
      return { refused: 'invalid_client' }
    }
    const wanted = [...new Set((requestedScope ?? '').split(' ').filter((s) => s !== ''))]
    if (
      wanted.some((s) => !(SCOPES as readonly string[]).includes(s) || !client.scopes.includes(s as Scope))
    ) {
      return { refused: 'invalid_scope' }
    }
    const scopes = wanted.length === 0 ? client.scopes : (wanted as Scope[])
    const ttlSeconds = kept.document.access_token_ttl_seconds ?? DEFAULT_TOKEN_TTL_SECONDS
    const issuedAt = Math.floor(nowMs / 1000)
    const key = await this.#ownKey()
    const issuer = this.#ownIssuer()
    const token = await new SignJWT({
      client_id: client.client_id,
      account_id: this.options.accountId,
      scope: scopes.join(' '),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: key.kid })
      .setIssuer(issuer)
      .setAudience(issuer)
      .setSubject(client.client_id)
      .setJti(randomBytes(16).toString('base64url'))
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .sign(key.privateKey)
    return { access_token: token, token_type: 'Bearer', expires_in: ttlSeconds, scope: scopes.join(' ') }
  }

  /** The kept document while it may still vouch for credentials, else null. */
  #current(nowMs: number): KeptDocument | null {
    const kept = this.#kept
    if (!kept || nowMs - kept.fetched_at > this.#maxOfflineMs) return null
    return kept
  }

  #ownIssuer(): string {
    return `hub:${this.options.agentId}`
  }

  #ownKey(): Promise<HubTokenKey> {
    this.#hubKey ??= hubTokenKey(this.options.dataDir)
    return this.#hubKey
  }

  #cloudKeySet(kept: KeptDocument): JWTVerifyGetKey {
    this.#cloudKeys ??= createLocalJWKSet(kept.document.token_keys)
    return this.#cloudKeys
  }

  /** The document kept on disk; a file that is not one is ignored (the hub then refuses until it fetches). */
  #load(): KeptDocument | null {
    if (!existsSync(this.#file)) return null
    try {
      const value: unknown = JSON.parse(readFileSync(this.#file, 'utf8'))
      return checkKept.Check(value) ? value : null
    } catch {
      return null
    }
  }

  /** Written whole to a temporary file, then renamed over the old one: a crash leaves one or the other. */
  #keep(kept: KeptDocument): void {
    writeStateFile(this.#file, `${JSON.stringify(kept)}\n`)
    this.#kept = kept
    this.#cloudKeys = null
  }
}

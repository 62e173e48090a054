import { createHash } from 'node:crypto'
import { mkdir, open, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ConnectionInfo, EnrollResponse } from '../../protocol/agent-api.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { LanCredentialsDocument } from '../../protocol/lan-credentials.ts'
import { PairingResponse } from '../../protocol/pairing.ts'
import { conforming } from './cloud-reply.ts'

/**
 * A refusal from the cloud, with its error_code, or a failure to reach it. `retryAfterMs` is set when the
 * cloud asked the hub to come back later (429 or 503 with Retry-After).
 */
export class CloudError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number | null,
    readonly retryAfterMs: number | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'CloudError'
  }

  /** The cloud said no, and asking again will not change that (a 4xx other than 429 Too Many Requests). */
  get refused(): boolean {
    return this.status !== null && this.status < 500 && this.status !== 429
  }
}

/** RFC 9110 §10.2.3: Retry-After is delay-seconds or an HTTP-date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null
  const value = header.trim()
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

/** The statuses with which the cloud asks to be asked again later (RFC 6585 §4, RFC 9110 §15.6.4). */
const COME_BACK_LATER = [429, 503]

const errorBody = conforming(ErrorBody)
const enrollReply = conforming(EnrollResponse)
const connectionReply = conforming(ConnectionInfo)
const pairingReply = conforming(PairingResponse)
const lanCredentialsReply = conforming(LanCredentialsDocument)

async function failure(res: Response): Promise<CloudError> {
  const body = errorBody(await res.json().catch(() => null))
  const wait = COME_BACK_LATER.includes(res.status) ? retryAfterMs(res.headers.get('retry-after')) : null
  return new CloudError(
    body?.message ?? `HTTP ${res.status}`,
    body?.error_code ?? 'http_error',
    res.status,
    wait,
  )
}

/** The body of a successful reply, checked against its protocol schema. */
async function reply<T>(res: Response, read: (value: unknown) => T | null, what: string): Promise<T> {
  const value = read(await res.json().catch(() => null))
  if (value === null)
    throw new CloudError(
      `the cloud's ${what} reply does not match the protocol`,
      'unexpected_reply',
      res.status,
    )
  return value
}

async function call(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) })
  } catch (error) {
    // fetch says only "fetch failed"; its cause says why (ECONNREFUSED, a TLS error, ...).
    const cause = (error as Error).cause ?? error
    const why = (cause as Error).message ?? String(cause)
    throw new CloudError(`cannot reach ${url}: ${why}`, 'unreachable', null, null, { cause })
  }
}

/** The hub's HTTP client of the agent API. */
export class CloudClient {
  constructor(
    readonly cloudUrl: string,
    private credential: string | null = null,
  ) {}

  setCredential(credential: string): void {
    this.credential = credential
  }

  async enroll(token: string, hostname: string, agentVersion: string): Promise<EnrollResponse> {
    const res = await call(`${this.cloudUrl}/agent-api/v1/enroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, hostname, agent_version: agentVersion }),
    })
    if (res.status !== 201) throw await failure(res)
    return reply(res, enrollReply, 'enrollment')
  }

  /** RFC 8628 §3.1: asks for a pairing (docs/developer-platform.md, "Pairing a hub"). */
  async requestPairing(hostname: string, agentVersion: string): Promise<PairingResponse> {
    const res = await call(`${this.cloudUrl}/agent-api/v1/pairings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hostname, agent_version: agentVersion }),
    })
    if (res.status !== 201) throw await failure(res)
    return reply(res, pairingReply, 'pairing')
  }

  /** RFC 8628 §3.4: one poll; a CloudError with authorization_pending, slow_down, ... until paired. */
  async pollPairing(deviceCode: string): Promise<EnrollResponse> {
    const res = await call(`${this.cloudUrl}/agent-api/v1/pairings/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code: deviceCode }),
    })
    if (res.status !== 200) throw await failure(res)
    return reply(res, enrollReply, 'pairing')
  }

  async connection(): Promise<ConnectionInfo> {
    const res = await call(`${this.cloudUrl}/agent-api/v1/connection`, { headers: this.#auth() })
    if (!res.ok) throw await failure(res)
    return reply(res, connectionReply, 'connection')
  }

  /** What the hub checks its account's API credentials with while the cloud is out of reach (hub/lan/). */
  async lanCredentials(): Promise<LanCredentialsDocument> {
    const res = await call(`${this.cloudUrl}/agent-api/v1/lan-credentials`, { headers: this.#auth() })
    if (!res.ok) throw await failure(res)
    return reply(res, lanCredentialsReply, 'lan-credentials')
  }

  /**
   * Streams a document to `dir/<sha256>` (never whole in memory), checking its size and SHA-256 on the way;
   * a file already there and complete is reused. Rejects with code `checksum_mismatch` or
   * `document_download_failed`.
   */
  async download(url: string, sha256: string, sizeBytes: number, dir: string): Promise<string> {
    const target = path.join(dir, sha256)
    if ((await stat(target).catch(() => null))?.size === sizeBytes) return target
    await mkdir(dir, { recursive: true })
    const res = await call(this.#onThisCloud(url), { headers: this.#auth() })
    if (!res.ok || !res.body) {
      await res.body?.cancel()
      const wait = COME_BACK_LATER.includes(res.status) ? retryAfterMs(res.headers.get('retry-after')) : null
      throw new CloudError(`download answered ${res.status}`, 'document_download_failed', res.status, wait)
    }
    const temp = `${target}.${process.pid}.part`
    const hash = createHash('sha256')
    let size = 0
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length
        hash.update(chunk)
        done(null, chunk)
      },
    })
    // Opened before the pipeline, not by it: a write stream opens its file lazily, so a body that breaks off
    // at once could otherwise create the file after the cleanup below has run.
    const file = await open(temp, 'w', 0o600)
    try {
      await pipeline(Readable.fromWeb(res.body as never), count, file.createWriteStream())
    } catch (error) {
      await rm(temp, { force: true })
      throw new CloudError(
        `download broke off: ${(error as Error).message}`,
        'document_download_failed',
        null,
      )
    }
    const digest = hash.digest('hex')
    if (size !== sizeBytes || digest !== sha256) {
      await rm(temp, { force: true })
      throw new CloudError(`document has ${size} bytes, SHA-256 ${digest}`, 'checksum_mismatch', null)
    }
    await rename(temp, target)
    return target
  }

  /**
   * The hub sends its credential only to the cloud it enrolled with: a document URL from an offer is taken
   * for its path alone, on the hub's own cloud URL (which also works where the cloud's PUBLIC_URL, e.g. its
   * default `localhost`, does not reach it from the hub's machine).
   */
  #onThisCloud(url: string): string {
    const { pathname, search } = new URL(url, this.cloudUrl)
    return new URL(`${pathname}${search}`, this.cloudUrl).toString()
  }

  #auth(): Record<string, string> {
    if (!this.credential) throw new Error('the hub is not enrolled')
    return { authorization: `Bearer ${this.credential}` }
  }
}

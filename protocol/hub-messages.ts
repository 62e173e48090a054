import { type Static, type TSchema, Type } from 'typebox'
import { DocumentFormat, RawLanguage } from './enums.ts'
import { ResolvedPrintOptions, WaitingReason } from './print-job.ts'
import { PrinterCapabilities } from './printer.ts'
import { PrinterHealth } from './printer-health.ts'

/**
 * Hub ↔ cloud messages over MQTT (docs/architecture.md: a job, end to end). Every message carries `v`, the
 * protocol version; a receiver refuses versions it does not know. Additive fields keep the version.
 */
export const PROTOCOL_VERSION = 1
const V = Type.Literal(PROTOCOL_VERSION)
const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
const DateTime = Type.String({ format: 'date-time', maxLength: 64 })
/** A hub release's version, X.Y.Z (ota/catalog.ts). */
export const RELEASE_VERSION_PATTERN = '^(0|[1-9]\\d{0,5})\\.(0|[1-9]\\d{0,5})\\.(0|[1-9]\\d{0,5})$'
const ReleaseVersion = Type.String({ pattern: RELEASE_VERSION_PATTERN, maxLength: 20 })

/** A printer as the hub sees it. The cloud derives the stable `printer_id` from the agent id and `key`. */
export const HubPrinter = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 512 }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  uri: Type.String({ maxLength: 1024, description: 'how the hub reaches it, e.g. socket://10.0.0.5:9100' }),
  languages: Type.Array(RawLanguage, { maxItems: 8 }),
  capabilities: PrinterCapabilities,
  health: PrinterHealth,
})
export type HubPrinter = Static<typeof HubPrinter>

export const UPDATE_FAILURES = [
  /** The catalog's signature does not verify with the release key in the hub's package, or it is malformed. */
  'catalog_rejected',
  /** The installer's size or SHA-256 differs from the catalog's. */
  'installer_rejected',
  /** The catalog has no such release, or no installer of it for this hub's architecture. */
  'not_in_catalog',
  'download_failed',
  /** Unpacking or checking the release on the hub failed (disk full, a broken archive). */
  'install_failed',
  /** The release did not connect to the cloud within the trial time, or stopped first: the hub went back. */
  'rolled_back',
  /** The hub does not run from an installed release (a development checkout): it cannot update itself. */
  'not_updatable',
] as const

/**
 * The hub's latest self-update (docs/hub-updates.md): to which version, and how it went. `in_progress` while
 * it downloads, unpacks and waits for the printers; `succeeded` once the new release connected; `failed`
 * with the reason otherwise.
 */
export const HubUpdate = Type.Object({
  version: ReleaseVersion,
  status: Type.Enum(['in_progress', 'succeeded', 'failed']),
  failure: Type.Optional(Type.Enum(UPDATE_FAILURES)),
  detail: Type.Optional(Type.String({ maxLength: 500 })),
  at: DateTime,
})
export type HubUpdate = Static<typeof HubUpdate>

/**
 * Whether an update to `version` is settled for good: under way, or failed for a reason that trying again
 * would not change (a download that broke off may be tried again). The cloud does not offer such a version to
 * the hub again, and the hub does not start it again.
 */
export function updateSettled(update: HubUpdate | null | undefined, version: string): boolean {
  if (update?.version !== version) return false
  return (
    update.status === 'in_progress' || (update.status === 'failed' && update.failure !== 'download_failed')
  )
}

/** hub → cloud, on connect and whenever something changes: what runs where, and every printer's health. */
/**
 * Where the hub serves the print API on its LAN, while it does (docs/lan-printing.md): its HTTPS port, its LAN
 * addresses, and what a till pins its self-signed certificate by: the SHA-256 of the certificate (hex) and of its
 * public key (RFC 7469 pin, base64), which survives a renewal.
 */
export const HubLanEndpoint = Type.Object({
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  addresses: Type.Array(Type.String({ maxLength: 45 }), { maxItems: 16 }),
  cert_sha256: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }),
  spki_sha256: Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', maxLength: 44 }),
})
export type HubLanEndpoint = Static<typeof HubLanEndpoint>

export const HubState = Type.Object({
  v: V,
  agent_version: Type.String({ maxLength: 64 }),
  host: Type.Object({
    hostname: Type.String({ maxLength: 255 }),
    platform: Type.String({ maxLength: 64 }),
    arch: Type.String({ maxLength: 64 }),
  }),
  printers: Type.Array(HubPrinter, { maxItems: 256 }),
  /** Absent when the hub has not updated itself since it was installed. */
  update: Type.Optional(HubUpdate),
  /**
   * The hub runs from an installed release and updates itself when told `run_release`. Hubs of releases
   * before self-updates, and hubs run from a checkout, leave it out and are not told.
   */
  updatable: Type.Optional(Type.Boolean()),
  lan: Type.Optional(HubLanEndpoint),
})
export type HubState = Static<typeof HubState>

/**
 * hub → cloud: presence. The hub publishes `online: true` after each connect and sets `online: false` as its
 * MQTT last will (published by the broker when the connection is lost or the keepalive lapses). `session`
 * names the connection, so that an old connection's will cannot take a reconnected hub offline.
 */
export const HubPresence = Type.Object({
  v: V,
  online: Type.Boolean(),
  session: Type.String({ maxLength: 64 }),
  /**
   * With `online: true`: the hub asks the cloud to answer `presence_recorded` once it has recorded it, and
   * announces itself again until it has that answer. The broker's acknowledgement only says that the broker
   * has it: a cloud node that took the message and died before recording it loses it. Hubs of releases before
   * this leave it out and are not answered.
   */
  confirm: Type.Optional(Type.Boolean()),
})
export type HubPresence = Static<typeof HubPresence>

/** cloud → hub: a job to spool. Sent again on every reconnect until the job leaves pending/reserved. */
/**
 * The Idempotency-Key a job was created with, as the cloud scopes it (the account, the endpoint's route, the
 * key) and the request's fingerprint. Carried in the offer because the hub is the one place that decides
 * whether a job reaches paper: a till that sent a job to the cloud and, timing out, sends it again on the hub's
 * LAN with the same key gets one print (docs/lan-printing.md).
 */
export const JobIdempotency = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 200 }),
  key: Type.String({ minLength: 1, maxLength: 128 }),
  fingerprint: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }),
})
export type JobIdempotency = Static<typeof JobIdempotency>

/**
 * The largest document an offer carries (`document.content_base64`): receipts and labels, whose download would
 * take longer than printing them. Larger ones are downloaded.
 */
export const OFFER_CONTENT_MAX_BYTES = 16 * 1024

export const JobOffer = Type.Object({
  v: V,
  print_job_id: Uuid,
  printer_id: Uuid,
  printer_key: Type.String(),
  document: Type.Object({
    document_id: Uuid,
    url: Type.String({ description: 'HTTP(S) URL the hub downloads with its own credential' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    size_bytes: Type.Integer({ minimum: 1 }),
    format: DocumentFormat,
    raw_language: Type.Union([RawLanguage, Type.Null()]),
    /**
     * The document itself, when it is small and the cloud had it at hand (a job created with its bytes): the hub
     * prints it without downloading it, once its size and SHA-256 match; otherwise it downloads from `url`.
     */
    content_base64: Type.Optional(
      Type.String({ maxLength: Math.ceil(OFFER_CONTENT_MAX_BYTES / 3) * 4, contentEncoding: 'base64' }),
    ),
  }),
  options: ResolvedPrintOptions,
  created_at: DateTime,
  /** The hub drops and fails (`expired`) an offer it could not start before this time. */
  expires_at: DateTime,
  idempotency: Type.Optional(JobIdempotency),
})
export type JobOffer = Static<typeof JobOffer>

/** hub → cloud: the offer is safely in the hub's spool (pending → reserved). */
export const JobAck = Type.Object({ v: V, print_job_id: Uuid, at: DateTime })
export type JobAck = Static<typeof JobAck>

export const FAILURE_REASONS = [
  'printer_unreachable',
  'printer_paper_out',
  'printer_cover_open',
  'printer_error',
  'document_download_failed',
  'checksum_mismatch',
  'unsupported_document',
  'render_failed',
  'interrupted',
  'expired',
  'cancelled_by_hub',
] as const
export type FailureReason = (typeof FAILURE_REASONS)[number]

/**
 * hub → cloud: the job started printing, or finished. `cancelled` answers a `cancel_job` command: the hub
 * dropped the job before any byte of it went to the printer. Repeated and stale messages change nothing.
 */
export const JobStatus = Type.Object({
  v: V,
  print_job_id: Uuid,
  status: Type.Enum(['printing', 'printed', 'failed', 'cancelled']),
  at: DateTime,
  failure_reason: Type.Optional(Type.Enum(FAILURE_REASONS)),
  detail: Type.Optional(Type.String({ maxLength: 500 })),
  /**
   * With `cancelled`: the hub dropped the offer unasked because the same request (the same Idempotency-Key
   * and fingerprint) was taken on its LAN as this job, which prints instead.
   */
  duplicate_of: Type.Optional(Uuid),
  /** With `cancelled`: the hub dropped the job unasked, cancelled on its LAN API (docs/lan-printing.md). */
  on_lan: Type.Optional(Type.Literal(true)),
})
export type JobStatus = Static<typeof JobStatus>

/**
 * hub → cloud: a job taken on the hub's LAN API (docs/lan-printing.md), as it is now: sent when it is taken and
 * again at each change of its status, each message whole, so that the cloud, whichever node handles which
 * message in whichever order, records the job once (with this id) and moves it only forward.
 */
export const LanJob = Type.Object({
  v: V,
  print_job_id: Uuid,
  printer_id: Uuid,
  document: Type.Object({
    document_id: Uuid,
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', maxLength: 64 }),
    size_bytes: Type.Integer({ minimum: 1 }),
    format: DocumentFormat,
    raw_language: Type.Union([RawLanguage, Type.Null()]),
    mime_type: Type.String({ maxLength: 200 }),
    filename: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]),
  }),
  options: ResolvedPrintOptions,
  created_at: DateTime,
  /** The API client that submitted it on the LAN. */
  client_id: Type.String({ maxLength: 200 }),
  idempotency: Type.Optional(JobIdempotency),
  status: Type.Enum(['reserved', 'printing', 'printed', 'failed', 'cancelled']),
  at: DateTime,
  failure_reason: Type.Optional(Type.Enum(FAILURE_REASONS)),
  detail: Type.Optional(Type.String({ maxLength: 500 })),
})
export type LanJob = Static<typeof LanJob>

/**
 * hub → cloud: why a job it holds is not printing yet (the printer cannot be reached, or needs paper, ...),
 * sent when the reason changes; null when it no longer waits. Starting or ending the job clears it too.
 */
export const JobWaiting = Type.Object({
  v: V,
  print_job_id: Uuid,
  reason: Type.Union([WaitingReason, Type.Null()]),
  at: DateTime,
})
export type JobWaiting = Static<typeof JobWaiting>

/**
 * cloud → hub: commands. `cancel_job` asks the hub to drop a job it has not started (docs/job-lifecycle.md):
 * it answers with the job's status, `cancelled` (or `failed` with `expired` when `reason` is `expired`) if it
 * dropped it, or `printing`/`printed`/`failed` if it had started. A job it never received is remembered as
 * dropped, so that an offer arriving later is never printed.
 */
export const HubCommand = Type.Union([
  Type.Object({
    v: V,
    command: Type.Literal('cancel_job'),
    print_job_id: Uuid,
    reason: Type.Optional(Type.Enum(['cancelled', 'expired'])),
  }),
  Type.Object({ v: V, command: Type.Literal('refresh_state') }),
  /**
   * Say again that you are here: the hub publishes `presence` online with its current session, then what
   * follows a connect (its state, its outbox). A cloud node sends it to every hub after it subscribed again
   * following a broker outage: after a Mosquitto restart (2.0.11) the presence that hubs published before
   * the nodes had subscribed again was delivered to no one.
   */
  Type.Object({ v: V, command: Type.Literal('announce') }),
  /**
   * The answer to a presence with `confirm`: the cloud recorded the hub online with this session. The hub
   * stops announcing itself again for that session.
   */
  Type.Object({ v: V, command: Type.Literal('presence_recorded'), session: Type.String({ maxLength: 64 }) }),
  /**
   * The release the hub should run (the catalog's current one, or a pinned one). A hub running another
   * version updates itself to it (docs/hub-updates.md) and reports how it went in its state's `update`.
   */
  Type.Object({ v: V, command: Type.Literal('run_release'), version: ReleaseVersion }),
  /**
   * Fetch GET /agent-api/v1/lan-credentials again now (docs/lan-printing.md): the LAN API was enabled or
   * disabled for the hub, or an API client of its account was made or revoked, or its printers changed.
   */
  Type.Object({ v: V, command: Type.Literal('refresh_lan') }),
])
export type HubCommand = Static<typeof HubCommand>

/** The wire contract: topic suffix under `hubs/{agent_id}/` → direction and payload schema. */
export const HUB_TOPICS = {
  state: { from: 'hub', schema: HubState },
  presence: { from: 'hub', schema: HubPresence },
  'job-ack': { from: 'hub', schema: JobAck },
  'job-status': { from: 'hub', schema: JobStatus },
  'job-waiting': { from: 'hub', schema: JobWaiting },
  'lan-job': { from: 'hub', schema: LanJob },
  'job-offer': { from: 'cloud', schema: JobOffer },
  command: { from: 'cloud', schema: HubCommand },
} as const satisfies Record<string, { from: 'hub' | 'cloud'; schema: TSchema }>
export type HubTopic = keyof typeof HUB_TOPICS
export type HubPayload<T extends HubTopic> = Static<(typeof HUB_TOPICS)[T]['schema']>

export const TOPIC_PREFIX = 'hubs'
export const hubTopic = (agentId: string, topic: HubTopic) => `${TOPIC_PREFIX}/${agentId}/${topic}`

/** Splits `hubs/{agent_id}/{topic}`; null for anything else. */
export function parseHubTopic(topic: string): { agentId: string; topic: HubTopic } | null {
  const parts = topic.split('/')
  if (parts.length !== 3 || parts[0] !== TOPIC_PREFIX || !parts[1]) return null
  const suffix = parts[2] as HubTopic
  return suffix in HUB_TOPICS ? { agentId: parts[1], topic: suffix } : null
}

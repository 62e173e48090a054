import { ESCPOS_RECEIPT } from '../cloud/test-cloud.ts'
import { KeepAliveClient } from './keep-alive-client.ts'
import { type Fleet, wallNow } from './multi-node-fleet.ts'
import type { BenchAccount } from './multi-node-provision.ts'
import { type Summary, summarize } from './stats.ts'

/**
 * d. of the multi-node benchmark: jobs created through the cloud's API and offered over MQTT to many
 * connected hubs of many accounts. Each account gets an access token (POST /oauth/token) and uploads one
 * ESC/POS document (POST /api/v1/documents); then `count` jobs are created with POST /api/v1/print-jobs, to
 * the printer of hub 0, 1, 2, … in turn (so consecutive jobs belong to different accounts, as a fleet's
 * customers send them), the nodes in turn, `inFlight` requests at a time per node. Counted at the simulated
 * hubs: each job's offer (`hubs/<id>/job-offer`) received. The requests go over kept-alive connections
 * (keep-alive-client.ts), as a backend's HTTP client sends them.
 */
export interface Dispatch {
  /** Jobs answered 201 per second: first request sent → last answer. */
  createdPerSecond: number
  /** Jobs whose offer reached their hub per second: first request sent → last offer received. */
  dispatchedPerSecond: number
  /** Distinct jobs offered (each hub may be offered a job again when it reconnects: counted once). */
  offers: number
  /** Distinct hubs that received an offer (each has one printer). */
  hubs: number
  failed: number
  /** The job's created_at (the cloud's clock, ms) → its offer's arrival at the hub. */
  latency: Summary
}

async function accessToken(url: string, account: BenchAccount): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: account.clientId,
      client_secret: account.clientSecret,
    }),
  })
  if (res.status !== 200) throw new Error(`token answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { access_token: string }).access_token
}

async function uploadDocument(url: string, token: string): Promise<string> {
  const form = new FormData()
  form.append('document_format', 'raw')
  form.append('document_raw_language', 'escpos')
  form.append('file', new Blob([ESCPOS_RECEIPT]), 'receipt.bin')
  const res = await fetch(`${url}/api/v1/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  })
  if (res.status !== 201) throw new Error(`document upload answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { document_id: string }).document_id
}

export interface JobTarget {
  printerId: string
  account: BenchAccount
}

/**
 * `measure` starts measuring with the first job request and ends with the last offer received (CPU). With
 * `perSecond`, job n is sent no sooner than n / perSecond seconds after the first (a steady load), else as
 * fast as the requests in flight are answered.
 */
export async function createJobs<M>(
  fleet: Fleet,
  nodeUrls: string[],
  targets: JobTarget[],
  count: number,
  inFlight: number,
  measure: () => () => M,
  perSecond?: number,
): Promise<Dispatch & { cpu: M }> {
  const url = nodeUrls[0]!
  const prepared = new Map<BenchAccount, { headers: Record<string, string>; documentId: string }>()
  for (const { account } of targets) {
    if (prepared.has(account)) continue
    const token = await accessToken(url, account)
    prepared.set(account, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      documentId: await uploadDocument(url, token),
    })
  }
  const offersBefore = (await fleet.status()).offers
  let next = 0
  let failed = 0
  let firstError = ''
  const t0 = wallNow()
  const measured = measure()
  const clients = nodeUrls.map((url) => new KeepAliveClient(url, inFlight))
  await Promise.all(
    clients.flatMap((client) =>
      Array.from({ length: inFlight }, async () => {
        while (next < count) {
          const n = next++
          const wait = perSecond ? t0 + (n * 1000) / perSecond - wallNow() : 0
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
          const target = targets[n % targets.length]!
          const { headers, documentId } = prepared.get(target.account)!
          const body = JSON.stringify({ document_id: documentId, printer_id: target.printerId })
          const res = await client.post('/api/v1/print-jobs', headers, body)
          if (res.status !== 201) {
            failed++
            firstError ||= `${res.status} ${res.body}`
          }
        }
      }),
    ),
  )
  const createdAt = wallNow()
  for (const client of clients) client.close()
  if (failed > 0)
    console.log(`  warning: ${failed} job requests failed, the first: ${firstError.slice(0, 300)}`)
  const expected = count - failed
  await fleet
    .until((s) => s.offers - offersBefore >= expected, 60_000)
    .catch((error: unknown) => console.log(`  warning: ${(error as Error).message}`))
  const cpu = measured()
  const first = new Map<string, { at: number; created: string; printerId: string }>()
  // This call's jobs: the fleet keeps every offer it received (a run may create jobs more than once).
  for (const [id, at, created, printerId] of await fleet.offers())
    if (!first.has(id) && Date.parse(created) >= t0 - 1000) first.set(id, { at, created, printerId })
  const offered = [...first.values()]
  const lastAt = Math.max(...offered.map((offer) => offer.at))
  return {
    createdPerSecond: count / ((createdAt - t0) / 1000),
    dispatchedPerSecond: offered.length / ((lastAt - t0) / 1000),
    offers: offered.length,
    hubs: new Set(offered.map((offer) => offer.printerId)).size,
    failed,
    latency: summarize(offered.map((offer) => offer.at - Date.parse(offer.created))),
    cpu,
  }
}

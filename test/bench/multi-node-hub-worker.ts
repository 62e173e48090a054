import { type HubPrinter, PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import { SimulatedHubSession } from './simulated-hub-session.ts'

/**
 * One process of simulated hubs for the multi-node benchmark (started by multi-node-fleet.ts, driven over its
 * IPC channel). Each simulated hub speaks to the broker as the hub's own session does
 * (simulated-hub-session.ts: its credential as login, its own `job-offer` and `command` subscriptions,
 * presence online after each connect with the offline presence as last will, reconnects with the hub's
 * exponential backoff and full jitter) and, as the real agent does on every connect and after every health
 * round (HUB_HEALTH_INTERVAL_MS, 30 s by default), sends its state report with one printer; it acknowledges
 * each offer it receives (`job-ack`) and reports the job printed at once, so that jobs do not pile up
 * unfinished. Nothing is printed: the figure is the offer's arrival.
 */
export interface WorkerHub {
  agentId: string
  credential: string
}

export type ToWorker =
  | {
      type: 'start'
      mqttUrl: string
      keepaliveSeconds: number
      hubs: WorkerHub[]
      printer: HubPrinter
      /** Sessions started per second (the fleet's first connections are spread, as hubs power up). */
      startsPerSecond: number
      /** A state report every this many ms while connected, as the hub's health rounds send one (0: none). */
      stateEveryMs: number
      /**
       * The loopback address this worker's connections come from (127.0.0.2, .3, …: Linux routes all of
       * 127.0.0.0/8 to the loopback interface), as real hubs come from hosts of their own. Measured apart
       * from the benchmark (one process opening 19,500 connections to one listener): from one address each
       * connect() past about 14,000 cost 0.75 to 1.15 ms of system CPU (the kernel's search of the
       * ephemeral port range, of which connect() takes every other port), from four addresses 0.05 to 0.09 ms.
       */
      sourceAddress: string
    }
  | { type: 'mark' }
  | { type: 'status' }
  | { type: 'offers' }
  /** Each hub's latest connect and every lost or refused connection since the last `mark` (wall-clock ms). */
  | { type: 'since-mark' }

export interface WorkerStatus {
  type: 'status'
  /** Sessions connected now (subscribed, presence acknowledged). */
  connected: number
  /** Sessions that completed a connect since the last `mark`. */
  connectedSinceMark: number
  /** Wall-clock ms of the latest connect since the last `mark` (0: none). */
  lastConnectAt: number
  /** Connections lost or refused so far, each followed by a backoff delay (the hub's `mqtt connection lost`). */
  retries: number
  /** Why connections could not be made, as the session logs it: once per hub each time the reason changes. */
  reasons: Record<string, number>
  offers: number
  /** State reports sent so far (on connects and every `stateEveryMs`). */
  stateReports: number
}

/** print_job_id, arrival (wall-clock ms), the job's created_at (ISO), printer_id */
export type OfferArrival = [string, number, string, string]

const now = () => performance.timeOrigin + performance.now()

const sessions: SimulatedHubSession[] = []
const connectedAt: number[] = []
let mark = Number.POSITIVE_INFINITY
let retries = 0
const reasons: Record<string, number> = {}
const lostAt: number[] = []
const offers: OfferArrival[] = []
let stateReports = 0

function start(message: Extract<ToWorker, { type: 'start' }>): void {
  const { hubs, printer } = message
  const broker = new URL(message.mqttUrl)
  hubs.forEach((hub, index) => {
    const publishState = () => {
      stateReports++
      session
        .publish('state', {
          v: PROTOCOL_VERSION,
          agent_version: '0.0.0-bench',
          host: { hostname: `bench-${hub.agentId.slice(0, 8)}`, platform: 'linux', arch: 'arm64' },
          printers: [{ ...printer, health: { ...printer.health, checked_at: new Date().toISOString() } }],
        })
        .catch(() => {})
    }
    const session: SimulatedHubSession = new SimulatedHubSession({
      host: broker.hostname,
      port: Number(broker.port),
      localAddress: message.sourceAddress,
      agentId: hub.agentId,
      credential: hub.credential,
      keepaliveSeconds: message.keepaliveSeconds,
      onConnected() {
        connectedAt[index] = now()
        publishState()
      },
      onOffer(offer) {
        offers.push([offer.print_job_id, now(), offer.created_at, offer.printer_id])
        // As the real hub reports a job it spooled and printed (without its `printing` report in between).
        const job = { v: PROTOCOL_VERSION, print_job_id: offer.print_job_id } as const
        session
          .publish('job-ack', { ...job, at: new Date().toISOString() })
          .then(() =>
            session.publish('job-status', { ...job, status: 'printed', at: new Date().toISOString() }),
          )
          .catch(() => {})
      },
      onLost(reason) {
        retries++
        if (now() >= mark) lostAt.push(now())
        if (reason) reasons[reason] = (reasons[reason] ?? 0) + 1
      },
    })
    sessions.push(session)
    connectedAt.push(0)
    setTimeout(() => session.start(), (index * 1000) / message.startsPerSecond)
    // Health rounds run on the hub's own clock: each hub's at its own phase.
    if (message.stateEveryMs > 0)
      setTimeout(
        () => setInterval(() => session.connected && publishState(), message.stateEveryMs),
        Math.random() * message.stateEveryMs,
      )
  })
}

function status(): WorkerStatus {
  let connected = 0
  let connectedSinceMark = 0
  let lastConnectAt = 0
  sessions.forEach((session, index) => {
    if (session.connected) connected++
    const at = connectedAt[index] ?? 0
    if (at >= mark) {
      connectedSinceMark++
      lastConnectAt = Math.max(lastConnectAt, at)
    }
  })
  return {
    type: 'status',
    connected,
    connectedSinceMark,
    lastConnectAt,
    retries,
    reasons,
    offers: offers.length,
    stateReports,
  }
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'start') start(message)
  else if (message.type === 'mark') {
    mark = now()
    lostAt.length = 0
  } else if (message.type === 'status') process.send?.(status())
  else if (message.type === 'offers') process.send?.({ type: 'offers', offers })
  else if (message.type === 'since-mark')
    process.send?.({ type: 'since-mark', connectedAt: connectedAt.filter((at) => at >= mark), lostAt })
})
// The benchmark ended (or died): nothing here may outlive it.
process.on('disconnect', () => process.exit(0))
process.send?.({ type: 'ready' })

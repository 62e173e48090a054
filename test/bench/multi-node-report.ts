import type { Dispatch } from './multi-node-dispatch.ts'
import { type CpuShare, formatCpu } from './process-cpu.ts'
import { formatSummary, type Summary } from './stats.ts'

/** CPU over one phase of the run, % of one core. */
export interface CpuFigure {
  cloud: CpuShare[]
  load: CpuShare[]
}

/** What one setup (embedded or cluster) measured. */
export interface Figures {
  name: string
  connected: number
  /** undefined: not all within the bound */
  connectSeconds: number | undefined
  cloudOnline: number
  cloudOnlineSeconds: number | undefined
  connectRetries: number
  heldConnected: number
  /** State reports the hubs sent per second while held. */
  heldStateReportsPerSecond: number
  /** CPU while held. */
  heldCpu: CpuFigure
  rss: { name: string; mb: number }[]
  brokerDescriptors?: number
  reconnect: {
    brokerDownSeconds: number
    wanted: number
    back: number
    fromStopSeconds: number | undefined
    fromUpSeconds: number | undefined
    /** Hubs the cloud's database shows online again, and when all were (undefined: not within the bound). */
    cloudOnline: number
    cloudOnlineFromStopSeconds: number | undefined
    retries: number
    /** Why hubs could not connect (each hub's reason logged when it changes), `reason count, …`. */
    reasons: string
    failedWhileUp: number
    backFromUp: Summary
    /** This machine's handshakes dropped by a full accept queue, and SYNs sent again, over the reconnect. */
    kernel: Record<string, number> | undefined
    /** CPU from listening again until every hub was back (or the bound). */
    cpu: CpuFigure
  }
  dispatch: Dispatch & { cpu: CpuFigure }
  /** The cloud nodes' warnings and errors over the run, by message. */
  warnings: string
}

/** The cloud's processes' CPU over the jobs, per job dispatched: ms. */
export function cloudMsPerJob(dispatch: Dispatch & { cpu: CpuFigure }): number {
  const percent = dispatch.cpu.cloud.reduce((sum, share) => sum + share.percent, 0)
  return (percent / 100 / dispatch.dispatchedPerSecond) * 1000
}

/** The floor setup's figures (multi-node.ts, `floor`), and the cluster's CPU per job over them. */
export function formatFloor(
  floor: { fast: FloorDispatch; paced?: FloorDispatch; rows: number; printed: number },
  cluster: Figures | undefined,
): string[] {
  const clusterMs = cluster ? cloudMsPerJob(cluster.dispatch) : undefined
  const phase = (label: string, dispatch: FloorDispatch) => {
    const ms = cloudMsPerJob(dispatch)
    return [
      `   ${label}: jobs created / dispatched per second ${dispatch.createdPerSecond.toFixed(0)} / ${dispatch.dispatchedPerSecond.toFixed(0)}; offers ${dispatch.offers}, failed requests ${dispatch.failed}`,
      `     created_at → offer at the hub: ${formatSummary(dispatch.latency, 0)}`,
      `     CPU: cloud ${formatCpu(dispatch.cpu.cloud)}; load ${formatCpu(dispatch.cpu.load)}`,
      `     CPU per job: ${ms.toFixed(2)} ms${clusterMs ? `; the cluster's ${clusterMs.toFixed(2)} ms is ${(clusterMs / ms).toFixed(2)}× this` : ''}`,
    ]
  }
  return [
    'e. d. at the floor: two job-floor-node.ts processes in place of the cluster nodes (a job: a row, three messages)',
    ...phase('as fast as taken', floor.fast),
    ...(floor.paced ? phase("at the cluster's rate", floor.paced) : []),
    `   rows written ${floor.rows}, of which printed ${floor.printed}`,
  ]
}
type FloorDispatch = Dispatch & { cpu: CpuFigure }

/** How the run was set up, for the report's heading. */
export interface RunSettings {
  hubs: number
  workers: number
  openFileLimit: number
  connectsPerSecond: number
  keepaliveSeconds: number
  holdSeconds: number
  stateEverySeconds: number
  jobs: number
  accounts: number
  inFlight: number
  cloudCatchUpSeconds: number
}

/** One line of the table: each setup's cell, and the figure the cluster/embedded ratio compares, if any. */
type Row = [label: string, cell: (f: Figures) => string, ratioOf?: (f: Figures) => number | undefined]

const seconds = (x: number | undefined) => (x === undefined ? 'not all in bound' : `${x.toFixed(1)} s`)
const spread = (x: Summary) => `${x.p50.toFixed(1)} / ${x.p99.toFixed(1)} / ${x.max.toFixed(1)} s`
const nodeMb = (f: Figures) =>
  f.rss.filter((r) => r.name.startsWith('cloud node')).reduce((sum, r) => sum + r.mb, 0)
const heldCpuSum = (f: Figures) => f.heldCpu.cloud.reduce((sum, p) => sum + p.percent, 0)

/**
 * The multi-node benchmark's table: the embedded node and the cluster side by side, with the ratio where
 * both ran (BENCH_MULTI_NODE_SETUPS may run one alone).
 */
export function formatReport(settings: RunSettings, embedded?: Figures, cluster?: Figures): string[] {
  const setups = [
    ['embedded:', embedded],
    ['cluster: ', cluster],
  ] as const
  const ratio = (of?: (f: Figures) => number | undefined) => {
    const [a, b] = [embedded && of?.(embedded), cluster && of?.(cluster)]
    return a === undefined || b === undefined || a === 0 ? '' : `${(b / a).toFixed(2)}x`
  }
  const line = (label: string, a: string, b: string, r: string) =>
    `  ${label.padEnd(44)} | ${a.padEnd(22)} | ${b.padEnd(22)} | ${r}`
  const row = ([label, cell, ratioOf]: Row) =>
    line(label, embedded ? cell(embedded) : '-', cluster ? cell(cluster) : '-', ratio(ratioOf))
  /** Each setup's own line under a row. */
  const each = (what: (f: Figures) => string) =>
    setups.flatMap(([name, f]) => (f ? [`     ${name} ${what(f)}`] : []))
  const cpu = (pick: (f: Figures) => CpuFigure) =>
    each((f) => `cloud ${formatCpu(pick(f).cloud)}; load ${formatCpu(pick(f).load)}`)
  const online = (f: Figures) =>
    f.reconnect.cloudOnlineFromStopSeconds === undefined
      ? `only ${f.reconnect.cloudOnline} after +${settings.cloudCatchUpSeconds} s`
      : seconds(f.reconnect.cloudOnlineFromStopSeconds)
  const s = settings
  return [
    '',
    `many hubs: ${s.hubs} simulated hubs (the hub's MQTT session on the wire, own enrolled credential each) in ${s.workers} processes; open-file limit ${s.openFileLimit}`,
    `  first connections paced at ${s.connectsPerSecond}/s; keep-alive ${s.keepaliveSeconds} s; held ${s.holdSeconds} s, a state report from each hub every ${s.stateEverySeconds} s; ${s.jobs} jobs to hubs of ${s.accounts} accounts, ${s.inFlight} requests in flight per node`,
    line('', embedded?.name ?? '-', cluster?.name ?? '-', 'ratio cluster/embedded'),
    row(['a. hubs connected and authenticated', (f) => String(f.connected), (f) => f.connected]),
    row([`   still connected after ${s.holdSeconds} s`, (f) => String(f.heldConnected)]),
    row(['   all connected (from first connect)', (f) => seconds(f.connectSeconds), (f) => f.connectSeconds]),
    row([
      '   all online in the database',
      (f) => (f.cloudOnlineSeconds === undefined ? `${f.cloudOnline} only` : seconds(f.cloudOnlineSeconds)),
      (f) => f.cloudOnlineSeconds,
    ]),
    row(['   connections lost or refused meanwhile', (f) => String(f.connectRetries)]),
    row(['   state reports per second while held', (f) => f.heldStateReportsPerSecond.toFixed(0)]),
    row(['   CPU while held, % of one core (sum)', (f) => `${heldCpuSum(f).toFixed(0)} %`, heldCpuSum]),
    ...cpu((f) => f.heldCpu),
    row(['b. cloud nodes VmRSS (sum)', (f) => `${nodeMb(f).toFixed(0)} MB`, nodeMb]),
    ...each(
      (f) =>
        f.rss.map((r) => `${r.name} ${r.mb.toFixed(0)} MB`).join(', ') +
        (f.brokerDescriptors === undefined ? '' : `; Mosquitto holds ${f.brokerDescriptors} descriptors`),
    ),
    row(['c. broker down (stop sent → listening)', (f) => seconds(f.reconnect.brokerDownSeconds)]),
    row([
      '   hubs back / connected before the restart',
      (f) => `${f.reconnect.back} / ${f.reconnect.wanted}`,
    ]),
    row([
      '   every hub back (from stop sent)',
      (f) => seconds(f.reconnect.fromStopSeconds),
      (f) => f.reconnect.fromStopSeconds,
    ]),
    row([
      '   every hub back (from listening again)',
      (f) => seconds(f.reconnect.fromUpSeconds),
      (f) => f.reconnect.fromUpSeconds,
    ]),
    row(['   every hub online in the database', online]),
    row(['   hubs back after listening: p50 / p99 / max', (f) => spread(f.reconnect.backFromUp)]),
    row(['   failed attempts, each then backing off', (f) => String(f.reconnect.retries)]),
    row(['   of which seen after it listened again', (f) => String(f.reconnect.failedWhileUp)]),
    row([
      '   accept queue full: handshakes dropped',
      (f) => String(f.reconnect.kernel?.ListenOverflows ?? 'n/a'),
    ]),
    row(['   SYNs sent again meanwhile', (f) => String(f.reconnect.kernel?.TCPSynRetrans ?? 'n/a')]),
    '   CPU from listening until every hub was back, % of one core',
    ...cpu((f) => f.reconnect.cpu),
    row([
      'd. jobs created (201) per second',
      (f) => f.dispatch.createdPerSecond.toFixed(0),
      (f) => f.dispatch.createdPerSecond,
    ]),
    row([
      '   jobs dispatched per second (POST → offer)',
      (f) => f.dispatch.dispatchedPerSecond.toFixed(0),
      (f) => f.dispatch.dispatchedPerSecond,
    ]),
    row(['   distinct hubs offered a job', (f) => String(f.dispatch.hubs)]),
    row([
      '   offers received / jobs / failed requests',
      (f) => `${f.dispatch.offers} / ${s.jobs} / ${f.dispatch.failed}`,
    ]),
    ...each((f) => `created_at → offer at the hub: ${formatSummary(f.dispatch.latency, 0)}`),
    '   CPU from the first job request to the last offer, % of one core',
    ...cpu((f) => f.dispatch.cpu),
    row([
      '   cloud CPU per job',
      (f) => `${cloudMsPerJob(f.dispatch).toFixed(2)} ms`,
      (f) => cloudMsPerJob(f.dispatch),
    ]),
    '   why hubs could not reconnect',
    ...each((f) => f.reconnect.reasons || 'nothing'),
    '  cloud warnings and errors over the run (count x message):',
    ...each((f) => `\n${f.warnings || '  none'}`),
  ]
}

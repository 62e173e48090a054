import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type AgentTimings, HubAgent } from '../../hub/agent.ts'
import { Spool } from '../../hub/jobs/spool.ts'
import { parsePrinterUri } from '../../hub/printers/printer-uri.ts'
import { TransportError } from '../../hub/transports/transport.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { FakeSession, fakeCloud } from './agent-fakes.ts'
import { documentOf, liveOffer, SPOOL_PRINTER } from './jobs/job-offers.ts'
import { describeReport } from './jobs/job-reports.ts'
import { ScriptedPrinter } from './jobs/scripted-printer.ts'

const SPEC = parsePrinterUri(`${SPOOL_PRINTER}?language=escpos`)
const IDENTITY = {
  agent_id: '0b3a2a36-1d2e-4c55-9d0e-9d6f1b2c3d4e',
  account_id: '33333333-3333-4333-8333-333333333333',
  name: 'test hub',
  credential: 'secret',
  cloud_url: 'http://127.0.0.1:1',
}
const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
/** Every timer a production interval would start is an hour, so that none fires unless a test shortens it. */
const TEST_TIMINGS: AgentTimings = {
  healthIntervalMs: HOUR_MS,
  statusTimeoutMs: 50,
  paperWaitTimeoutMs: HOUR_MS,
  unreachableTimeoutMs: HOUR_MS,
  recheckMs: HOUR_MS,
  renderDeadlineMs: 1_000,
  presenceConfirmMs: HOUR_MS,
}

const idOf = (n: number) => liveOffer(n).print_job_id

describe('HubAgent (fake session and cloud, real spool file, scripted ESC/POS printer)', () => {
  let dir: ReturnType<typeof tempDir>
  let printer: ScriptedPrinter
  let cloud: ReturnType<typeof fakeCloud>
  let running: { agent: HubAgent; session: FakeSession }[]

  beforeEach(() => {
    dir = tempDir('hub-agent-')
    printer = new ScriptedPrinter()
    cloud = fakeCloud((sha256) => documentOf(Number(sha256)))
    running = []
  })
  afterEach(async () => {
    for (const { session } of running) session.ackAll() // a failed test may have left a publish waiting
    await Promise.all(running.map(({ agent }) => agent.stop()))
    dir.remove()
  })

  const spoolFile = () => path.join(dir.path, 'spool.sqlite')
  const documentsDir = () => path.join(dir.path, 'documents')

  function startHub(timings: Partial<AgentTimings> = {}): { agent: HubAgent; session: FakeSession } {
    let session: FakeSession | undefined
    const agent = new HubAgent({
      identity: IDENTITY,
      mqttUrl: 'mqtt://127.0.0.1:1',
      keepaliveSeconds: 60,
      dataDir: dir.path,
      printers: [SPEC],
      createTransport: () => printer,
      describe: () => SPOOL_PRINTER,
      logger: pino({ level: 'silent' }),
      timings: { ...TEST_TIMINGS, ...timings },
      renderWorkers: 1,
      openSession: (handlers) => {
        session = new FakeSession(handlers)
        return session
      },
      cloud,
    })
    agent.start()
    running.push({ agent, session: session! })
    return { agent, session: session! }
  }

  /** Opens the spool file beside the running hub (SQLite allows it) and reads it. */
  function inSpool<T>(read: (spool: Spool) => T): T {
    const spool = new Spool(spoolFile())
    try {
      return read(spool)
    } finally {
      spool.close()
    }
  }
  const outboxOnDisk = () => inSpool((spool) => spool.outbox().map((m) => describeReport(m.topic, m.payload)))

  it('stores an offer, acknowledges it, writes its exact bytes, and reports printing then printed in order', async () => {
    const { session } = startHub()
    expect(session.started).toBe(true)
    session.connect()
    session.offer(liveOffer(1))
    await expect
      .poll(() => session.reports())
      .toEqual(['job-ack', 'job-status:printing', 'job-status:printed'])
    expect(session.published.find((m) => m.topic === 'job-ack')?.payload).toMatchObject({
      print_job_id: idOf(1),
    })
    expect(printer.bytes()).toEqual(documentOf(1))
    expect(cloud.downloads).toEqual([liveOffer(1).document.url])
    expect(inSpool((spool) => spool.find(idOf(1))?.state)).toBe('printed')
    await expect.poll(outboxOnDisk).toEqual([])
  })

  it('acknowledges a repeated offer again and prints the job once', async () => {
    const { session } = startHub()
    session.connect()
    session.offer(liveOffer(1))
    await expect.poll(() => session.reports().at(-1)).toBe('job-status:printed')
    session.offer(liveOffer(1))
    // The job's final status is sent again: the cloud evidently missed it.
    await expect.poll(() => session.reports().slice(3)).toEqual(['job-status:printed'])
    expect(printer.bytes()).toEqual(documentOf(1))
  })

  it('sends the state after each connect, before the outbox', async () => {
    const { session } = startHub()
    session.offer(liveOffer(1)) // stored while offline: its reports wait in the outbox
    await expect.poll(outboxOnDisk).toEqual(['job-ack', 'job-status:printing', 'job-status:printed'])
    expect(session.published).toEqual([])
    session.connect()
    await expect
      .poll(() => session.published.map((m) => m.topic))
      .toEqual(['state', 'job-ack', 'job-status', 'job-status'])
    expect(session.published[0]?.payload).toMatchObject({
      agent_version: '0.1.0',
      printers: [{ key: SPEC.key, languages: ['escpos'] }],
    })
  })

  it('asks idle printers for their health at start and sends it in the state report after the round', async () => {
    printer.condition.paper = 'out'
    const { session } = startHub()
    session.connect()
    const healthInStates = () =>
      session.published
        .filter((m) => m.topic === 'state')
        .map((m) => (m.payload as { printers: { health: { state: string } }[] }).printers[0]?.health.state)
    // At connect nothing is known yet; then one report for the change, and one that ends the round.
    await expect.poll(healthInStates).toEqual(['unknown', 'paper_out', 'paper_out'])
    expect(printer.sent('hex')).toEqual(['100401100402100403100404'])
  })

  it('answers refresh_state with the state report', async () => {
    const { session } = startHub()
    session.connect()
    await expect.poll(() => session.published.length).toBeGreaterThan(0)
    const before = session.published.filter((m) => m.topic === 'state').length
    session.command({ v: 1, command: 'refresh_state' })
    expect(session.published.filter((m) => m.topic === 'state')).toHaveLength(before + 1)
  })

  it('holds a job while the paper is out (job-waiting), and prints it once paper is loaded', async () => {
    printer.condition.paper = 'out'
    const { session } = startHub({ recheckMs: 10 })
    session.connect()
    session.offer(liveOffer(1))
    await expect.poll(() => session.reports()).toEqual(['job-ack', 'job-waiting:paper_out'])
    expect(printer.written).toEqual([])
    printer.condition.paper = 'in'
    await expect
      .poll(() => session.reports())
      .toEqual(['job-ack', 'job-waiting:paper_out', 'job-status:printing', 'job-status:printed'])
    expect(printer.bytes()).toEqual(documentOf(1))
  })

  it('fails a job `interrupted` when the printer stops taking its bytes', async () => {
    printer.condition.writeError = new TransportError('write_failed', 'EPIPE: the printer went away')
    const { session } = startHub()
    session.connect()
    session.offer(liveOffer(1))
    await expect
      .poll(() => session.reports())
      .toEqual(['job-ack', 'job-status:printing', 'job-status:failed:interrupted'])
    expect(session.published.at(-1)?.payload).toMatchObject({ detail: 'EPIPE: the printer went away' })
  })

  it('fails an offer for a printer this hub does not have with printer_unreachable', async () => {
    const { session } = startHub()
    session.connect()
    session.offer(liveOffer(1, 'socket://10.0.0.9:9100'))
    await expect.poll(() => session.reports()).toEqual(['job-ack', 'job-status:failed:printer_unreachable'])
  })

  it('cancels a queued job: it is reported cancelled and never reaches the printer', async () => {
    printer.condition.paper = 'out'
    const { session } = startHub({ recheckMs: 10 })
    session.connect()
    session.offer(liveOffer(1))
    await expect.poll(() => session.reports()).toEqual(['job-ack', 'job-waiting:paper_out'])
    session.command({ v: 1, command: 'cancel_job', print_job_id: idOf(1) })
    await expect.poll(() => session.reports().at(-1)).toBe('job-status:cancelled')
    // The sentinel: a later job prints after paper is loaded; job 1, created first, would have printed first.
    session.offer(liveOffer(2))
    printer.condition.paper = 'in'
    await expect.poll(() => session.reports().at(-1)).toBe('job-status:printed')
    expect(printer.bytes()).toEqual(documentOf(2))
    expect(inSpool((spool) => spool.find(idOf(1))?.state)).toBe('cancelled')
  })

  it('deletes a report only once the broker acknowledged it, and sends the outbox again after a reconnect', async () => {
    const { session } = startHub()
    session.autoAck = false
    session.connect()
    session.offer(liveOffer(1))
    await expect.poll(() => inSpool((spool) => spool.find(idOf(1))?.state)).toBe('printed')
    // One at a time, in order: the ack is out, unacknowledged, and nothing follows it yet.
    expect(session.reports()).toEqual(['job-ack'])
    expect(outboxOnDisk()).toEqual(['job-ack', 'job-status:printing', 'job-status:printed'])
    session.ack('job-ack')
    await expect.poll(() => session.reports()).toEqual(['job-ack', 'job-status:printing'])
    expect(outboxOnDisk()).toEqual(['job-status:printing', 'job-status:printed'])
    session.drop() // `printing` never acknowledged
    expect(outboxOnDisk()).toEqual(['job-status:printing', 'job-status:printed'])
    session.autoAck = true
    session.connect()
    await expect
      .poll(() => session.reports())
      .toEqual(['job-ack', 'job-status:printing', 'job-status:printing', 'job-status:printed'])
    await expect.poll(outboxOnDisk).toEqual([])
  })

  it('after a restart, reports a job left printing as failed `interrupted` and never prints it', async () => {
    inSpool((spool) => {
      spool.accept(liveOffer(1))
      spool.startPrinting(idOf(1))
      for (const message of spool.outbox()) spool.delivered(message.seq) // the cloud had both reports
    })
    const { session } = startHub()
    session.connect()
    await expect.poll(() => session.reports()).toEqual(['job-status:failed:interrupted'])
    // The sentinel: a later job prints; job 1 is not printed before or after it.
    session.offer(liveOffer(2))
    await expect.poll(() => session.reports().at(-1)).toBe('job-status:printed')
    expect(printer.bytes()).toEqual(documentOf(2))
    expect(inSpool((spool) => spool.find(idOf(1))?.state)).toBe('failed')
  })

  it('housekeeping forgets jobs finished over a week ago and documents no unfinished job needs', async () => {
    const now = Date.now()
    const elsewhere = 'socket://10.0.0.9:9100' // not attached: its job stays queued and keeps its document
    inSpool((spool) => {
      for (const [n, finishedAgo] of [
        [1, 8 * DAY_MS],
        [2, DAY_MS],
      ] as const) {
        const at = new Date(now - finishedAgo)
        spool.accept(liveOffer(n), at)
        spool.startPrinting(idOf(n), at)
        spool.finish(idOf(n), at)
      }
      spool.accept(liveOffer(3, elsewhere))
    })
    mkdirSync(documentsDir())
    for (const n of [1, 2, 3])
      writeFileSync(path.join(documentsDir(), liveOffer(n).document.sha256), documentOf(n))
    writeFileSync(path.join(documentsDir(), `${liveOffer(4).document.sha256}.part`), 'a download under way')
    startHub()
    await expect
      .poll(() => readdirSync(documentsDir()).sort())
      .toEqual([liveOffer(3).document.sha256, `${liveOffer(4).document.sha256}.part`])
    expect(inSpool((spool) => [1, 2, 3].map((n) => spool.find(idOf(n))?.state))).toEqual([
      undefined,
      'printed',
      'queued',
    ])
    expect(existsSync(spoolFile())).toBe(true)
  })
})

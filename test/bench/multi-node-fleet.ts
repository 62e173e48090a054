import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import { exitOf, hasExited, ROOT } from '../helpers/cli.ts'
import type { OfferArrival, ToWorker, WorkerHub, WorkerStatus } from './multi-node-hub-worker.ts'

/**
 * Simulated hubs spread over worker processes (multi-node-hub-worker.ts), so that no process holds more
 * client sockets than its open-file limit allows: with everything on one machine each connection costs one
 * descriptor in a worker and one in the broker, so a worker takes at most `perWorker` hubs.
 */
export interface FleetStatus {
  connected: number
  connectedSinceMark: number
  lastConnectAt: number
  retries: number
  reasons: Record<string, number>
  offers: number
  stateReports: number
}

export interface Fleet {
  size: number
  status(): Promise<FleetStatus>
  /** From now on, `connectedSinceMark` counts the hubs that completed a connect. */
  mark(): Promise<void>
  offers(): Promise<OfferArrival[]>
  /** Since the last `mark`: each hub's latest connect, and each connection lost or refused (wall-clock ms). */
  sinceMark(): Promise<{ connectedAt: number[]; lostAt: number[] }>
  /** Polls until `done` holds (every 100 ms); throws after `timeoutMs` with the last status. */
  until(done: (status: FleetStatus) => boolean, timeoutMs: number): Promise<FleetStatus>
  pids(): number[]
  stop(): Promise<void>
}

const WORKER = path.join(ROOT, 'test/bench/multi-node-hub-worker.ts')

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across the benchmark's processes. */
export const wallNow = () => performance.timeOrigin + performance.now()

class Worker {
  readonly #child: ChildProcess
  readonly #waiting: ((message: { type: string }) => void)[] = []

  constructor() {
    this.#child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.#child.on('message', (message: { type: string }) => this.#waiting.shift()?.(message))
  }

  get pid(): number {
    return this.#child.pid ?? 0
  }

  /** The next message from the worker (they answer in order). */
  next<T>(): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new Error(`hub worker ${this.pid} exited`))
      this.#child.once('exit', onExit)
      this.#waiting.push((message) => {
        this.#child.off('exit', onExit)
        resolve(message as T)
      })
    })
  }

  send(message: ToWorker): void {
    this.#child.send(message)
  }

  async ask<T>(message: ToWorker): Promise<T> {
    const answer = this.next<T>()
    this.send(message)
    return answer
  }

  async stop(): Promise<void> {
    if (!hasExited(this.#child)) this.#child.kill('SIGKILL')
    await exitOf(this.#child)
  }
}

export async function startFleet(options: {
  mqttUrl: string
  keepaliveSeconds: number
  hubs: WorkerHub[]
  printer: HubPrinter
  perWorker: number
  /** First connections per second, over the whole fleet. */
  startsPerSecond: number
  /** Each hub's state report interval while connected, as its health rounds (0: on connect only). */
  stateEveryMs: number
}): Promise<Fleet> {
  const count = Math.max(1, Math.ceil(options.hubs.length / options.perWorker))
  const workers = Array.from({ length: count }, () => new Worker())
  const stop = () => Promise.all(workers.map((worker) => worker.stop())).then(() => {})
  try {
    await Promise.all(workers.map((worker) => worker.next()))
    workers.forEach((worker, index) => {
      worker.send({
        type: 'start',
        mqttUrl: options.mqttUrl,
        keepaliveSeconds: options.keepaliveSeconds,
        hubs: options.hubs.filter((_, i) => i % count === index),
        printer: options.printer,
        startsPerSecond: options.startsPerSecond / count,
        stateEveryMs: options.stateEveryMs,
        sourceAddress: `127.0.0.${2 + index}`,
      })
    })
  } catch (error) {
    await stop()
    throw error
  }
  const status = async (): Promise<FleetStatus> => {
    const all = await Promise.all(workers.map((worker) => worker.ask<WorkerStatus>({ type: 'status' })))
    return {
      connected: all.reduce((sum, s) => sum + s.connected, 0),
      connectedSinceMark: all.reduce((sum, s) => sum + s.connectedSinceMark, 0),
      lastConnectAt: Math.max(...all.map((s) => s.lastConnectAt)),
      retries: all.reduce((sum, s) => sum + s.retries, 0),
      reasons: all.reduce<Record<string, number>>((sum, s) => {
        for (const [reason, n] of Object.entries(s.reasons)) sum[reason] = (sum[reason] ?? 0) + n
        return sum
      }, {}),
      offers: all.reduce((sum, s) => sum + s.offers, 0),
      stateReports: all.reduce((sum, s) => sum + s.stateReports, 0),
    }
  }
  return {
    size: options.hubs.length,
    status,
    async mark() {
      for (const worker of workers) worker.send({ type: 'mark' })
      // Answered after the mark, since a worker handles its messages in order.
      await status()
    },
    async offers() {
      const all = await Promise.all(
        workers.map((worker) => worker.ask<{ offers: OfferArrival[] }>({ type: 'offers' })),
      )
      return all.flatMap((answer) => answer.offers)
    },
    async sinceMark() {
      const all = await Promise.all(
        workers.map((worker) =>
          worker.ask<{ connectedAt: number[]; lostAt: number[] }>({ type: 'since-mark' }),
        ),
      )
      return {
        connectedAt: all.flatMap((answer) => answer.connectedAt),
        lostAt: all.flatMap((answer) => answer.lostAt),
      }
    },
    async until(done, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const now = await status()
        if (done(now)) return now
        if (Date.now() > deadline)
          throw new Error(`simulated hubs: condition not met within ${timeoutMs} ms: ${JSON.stringify(now)}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    pids: () => workers.map((worker) => worker.pid),
    stop,
  }
}

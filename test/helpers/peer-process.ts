import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * A server program a test starts itself (redis-server, mosquitto): its output kept, stopped by `stop()`, and
 * killed when the test process exits without stopping it, so that no peer outlives its test run.
 */
export interface PeerProcess {
  child: ChildProcess
  /** What it wrote to stdout and stderr so far. */
  output(): string
  exited(): boolean
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. Safe to call twice. */
  stop(graceMs?: number): Promise<void>
}

const running = new Set<ChildProcess>()
let exitHookInstalled = false

function killOnExit(child: ChildProcess): void {
  running.add(child)
  child.once('exit', () => running.delete(child))
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', () => {
    for (const peer of running) peer.kill('SIGKILL')
  })
}

export function startPeer(command: string, args: string[], options: SpawnOptions = {}): PeerProcess {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  killOnExit(child)
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8')
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  // A program that cannot be started (not installed) is reported by exited() and output(), not thrown.
  child.once('error', (error) => {
    output += `${command}: ${error.message}\n`
  })
  const exited = () => child.exitCode !== null || child.signalCode !== null || child.pid === undefined
  const gone = new Promise<void>((resolve) => {
    if (exited()) resolve()
    child.once('exit', () => resolve())
    child.once('error', () => resolve())
  })
  return {
    child,
    output: () => output,
    exited,
    async stop(graceMs = 3_000) {
      if (exited()) return gone
      child.kill('SIGCONT') // a paused peer would not act on SIGTERM
      child.kill('SIGTERM')
      const stopped = await Promise.race([gone.then(() => true), sleep(graceMs).then(() => false)])
      if (!stopped) {
        child.kill('SIGKILL')
        await gone
      }
    },
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * Polls `ready` until it answers true; throws with the peer's output if the peer exits first or `timeoutMs`
 * passes.
 */
export async function waitUntilReady(
  peer: PeerProcess,
  name: string,
  ready: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (peer.exited()) throw new Error(`${name} exited before it was ready:\n${peer.output()}`)
    if (await ready()) return
    await sleep(20)
  }
  throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${peer.output()}`)
}

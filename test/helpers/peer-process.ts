import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process'
import { chownSync, readdirSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * A server program a test starts itself (redis-server, mosquitto): its output kept, stopped by `stop()`, and
 * killed when the test process ends without stopping it, so that no peer outlives its test run: on a normal
 * exit by an exit hook, and on any other end (a worker killed after a timeout, SIGKILL) by a watchdog `sh`
 * that holds a pipe from the test process and kills the peer when that pipe closes.
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

/** A `sh` that kills `pid` once its stdin, a pipe from this process, reaches its end (this process ended). */
function watchdog(pid: number): ChildProcess {
  const guard = spawn('sh', ['-c', `read _ignored; kill -KILL ${pid} 2>/dev/null`], {
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  // Neither the guard nor its pipe keeps the test process alive.
  guard.unref()
  ;(guard.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  guard.once('error', () => {})
  return guard
}

export function startPeer(command: string, args: string[], options: SpawnOptions = {}): PeerProcess {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  killOnExit(child)
  if (child.pid !== undefined) {
    const guard = watchdog(child.pid)
    killOnExit(guard)
    child.once('exit', () => guard.kill('SIGKILL'))
  }
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

/**
 * As root (CI runs the tests as root): the user and group a peer runs as instead, `name` (the one its Debian
 * package made) or else `nobody`. Otherwise undefined: the peer runs as the tests do.
 */
export function unprivilegedUser(name: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  for (const candidate of [name, 'nobody']) {
    try {
      const entry = execFileSync('getent', ['passwd', candidate], { encoding: 'utf8' }).split(':')
      return { uid: Number(entry[2]), gid: Number(entry[3]) }
    } catch {
      // no such user: try the next
    }
  }
  throw new Error(`no unprivileged user (${name}, nobody) to run ${name} as`)
}

/** Makes `dir` and everything in it belong to `owner`. */
export function chownTree(dir: string, owner: { uid: number; gid: number }): void {
  chownSync(dir, owner.uid, owner.gid)
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    chownSync(path.join(entry.parentPath, entry.name), owner.uid, owner.gid)
}

import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { freePort } from './free-port.ts'
import { chownTree, type PeerProcess, startPeer, unprivilegedUser, waitUntilReady } from './peer-process.ts'
import { tempDir } from './temp-dir.ts'

/**
 * A real Redis for tests: Debian's `redis-server` on 127.0.0.1 in a temporary directory, keeping nothing on
 * disk (no RDB snapshots, no append-only file). As root (CI) it runs as the unprivileged `redis` user
 * (`nobody` where there is none), owning its directory: Redis never drops root's rights by itself.
 */
export interface RedisServer {
  /** redis://127.0.0.1:PORT */
  url: string
  port: number
  /** Its working directory (removed by stop()). */
  dir: string
  /** What it logged so far. */
  log(): string
  /** SIGSTOP: it keeps its connections but answers nothing, as a Redis behind a lost network would. */
  pause(): void
  resume(): void
  /** Ends it and removes its directory; safe to call twice. */
  stop(): Promise<void>
}

export interface RedisServerOptions {
  /** The port to listen on (a restart on the port of a stopped server); a free one by default. */
  port?: number
}

/** The configuration: loopback only, nothing persisted, logging to stdout. */
function redisConfig(port: number, dir: string): string {
  return [
    'bind 127.0.0.1',
    `port ${port}`,
    'daemonize no',
    'save ""',
    'appendonly no',
    `dir ${dir}`,
    'logfile ""',
    'loglevel notice',
    '',
  ].join('\n')
}

/** Whether a Redis on `port` answers PING with +PONG now. */
export function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    let reply = ''
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write('PING\r\n'))
    socket.setTimeout(1_000, () => socket.destroy())
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1')
      if (reply.includes('\r\n')) socket.end()
    })
    socket.once('close', () => resolve(reply.startsWith('+PONG\r\n')))
    socket.once('error', () => {})
  })
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = tempDir('print-hub-redis-')
  const owner = unprivilegedUser('redis')
  let peer: PeerProcess | undefined
  const stop = async () => {
    await peer?.stop()
    dir.remove()
  }
  try {
    // The port was free a moment ago; another program may take it first, so a failed start tries another.
    let port = 0
    for (let attempt = 1; ; attempt++) {
      port = options.port ?? (await freePort())
      const configFile = path.join(dir.path, 'redis.conf')
      writeFileSync(configFile, redisConfig(port, dir.path), { mode: 0o600 })
      if (owner) chownTree(dir.path, owner)
      peer = startPeer('redis-server', [configFile], { cwd: dir.path, ...owner })
      try {
        await waitUntilReady(peer, 'redis-server', () => answersPing(port))
        break
      } catch (error) {
        await peer.stop()
        const portTaken = /Address already in use/i.test(peer.output())
        if (attempt === 3 || !portTaken || options.port !== undefined) throw error
      }
    }
    const running = peer
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      dir: dir.path,
      log: () => running.output(),
      pause: () => running.child.kill('SIGSTOP'),
      resume: () => running.child.kill('SIGCONT'),
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { freePort } from './free-port.ts'
import {
  acceptsConnections,
  chownTree,
  type PeerProcess,
  startPeer,
  unprivilegedUser,
  waitUntilReady,
} from './peer-process.ts'
import { tempDir } from './temp-dir.ts'

/**
 * A real MQTT broker for tests: Debian's Mosquitto 2.0 on 127.0.0.1, started as `mosquitto -c
 * <dir>/mosquitto.conf` in a temporary directory with the configuration and files the test gives.
 *
 * As root (CI) the broker is started as the unprivileged `mosquitto` user (`nobody` where there is none),
 * owning its directory, rather than as root with `user root`: it never runs with root's rights, and it can
 * read the files it is given (started as root, Mosquitto would switch to `mosquitto` itself before reading
 * them, and fail on a directory only root may enter). A `user` option in a configuration does nothing, since
 * Mosquitto switches users only when started as root.
 */
export interface MosquittoServer {
  /** mqtt://127.0.0.1:PORT */
  url: string
  port: number
  /** The directory holding mosquitto.conf and the given files (removed by stop()). */
  dir: string
  /** What it wrote to stdout and stderr so far (its log, with the default `log_dest stderr`). */
  log(): string
  /** Stops it and starts it again on the same port with the same files (its persistence, if configured). */
  restart(): Promise<void>
  /** Ends it and removes its directory; safe to call twice. */
  stop(): Promise<void>
}

/** Where the configuration may put things: the port to listen on and the directory of its files. */
export interface MosquittoPlace {
  port: number
  dir: string
}

export interface MosquittoOptions {
  /**
   * The configuration. A function gets the port and the directory and writes the whole file, listeners
   * included (`listener ${port} 127.0.0.1`, TLS files by `${dir}/…`); text is used after a `listener PORT
   * 127.0.0.1` line the helper writes. Default: that listener with `allow_anonymous true`.
   */
  config?: string | ((place: MosquittoPlace) => string | Promise<string>)
  /** Files written beside mosquitto.conf before it starts (password file, ACL file, certificates). */
  files?: Record<string, string | Uint8Array>
  /** How long it may take to listen (ms). */
  startTimeoutMs?: number
}

async function configText(config: MosquittoOptions['config'], place: MosquittoPlace): Promise<string> {
  if (typeof config === 'function') return config(place)
  return [`listener ${place.port} 127.0.0.1`, config ?? 'allow_anonymous true', ''].join('\n')
}

export async function startMosquitto(options: MosquittoOptions = {}): Promise<MosquittoServer> {
  const dir = tempDir('print-hub-mosquitto-')
  const owner = unprivilegedUser('mosquitto')
  let peer: PeerProcess | undefined
  const stop = async () => {
    await peer?.stop()
    dir.remove()
  }
  try {
    for (const [name, content] of Object.entries(options.files ?? {})) {
      const file = path.join(dir.path, name)
      if (path.relative(dir.path, file).startsWith('..')) throw new Error(`${name}: outside the directory`)
      mkdirSync(path.dirname(file), { recursive: true })
      // Mosquitto 2.0 warns about password and ACL files others can read.
      writeFileSync(file, content, { mode: 0o600 })
    }
    const configFile = path.join(dir.path, 'mosquitto.conf')
    // The port was free a moment ago; another program may take it first, so a failed start tries another.
    let port = 0
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      writeFileSync(configFile, await configText(options.config, { port, dir: dir.path }), { mode: 0o600 })
      if (owner) chownTree(dir.path, owner)
      peer = startPeer('mosquitto', ['-c', configFile], { cwd: dir.path, ...owner })
      try {
        await waitUntilReady(peer, 'mosquitto', () => acceptsConnections(port), options.startTimeoutMs)
        break
      } catch (error) {
        await peer.stop()
        if (attempt === 3 || !/Address already in use/i.test(peer.output())) throw error
      }
    }
    const logs: string[] = []
    let running = peer
    return {
      url: `mqtt://127.0.0.1:${port}`,
      port,
      dir: dir.path,
      log: () => logs.join('') + running.output(),
      async restart() {
        await running.stop()
        logs.push(running.output())
        running = startPeer('mosquitto', ['-c', configFile], { cwd: dir.path, ...owner })
        peer = running
        await waitUntilReady(running, 'mosquitto', () => acceptsConnections(port), options.startTimeoutMs)
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CLOUD_PASSWORD_FILE, DYNSEC_FILE, MOSQUITTO_CONF } from '../../cloud/broker/mosquitto-config.ts'
import { runCli } from '../helpers/cli.ts'
import { freePort } from '../helpers/free-port.ts'
import {
  acceptsConnections,
  chownTree,
  type PeerProcess,
  startPeer,
  unprivilegedUser,
  waitUntilReady,
} from '../helpers/peer-process.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { wallNow } from './multi-node-fleet.ts'
import type { WorkerHub } from './multi-node-hub-worker.ts'
import { dynsecWithHubs } from './multi-node-provision.ts'

/**
 * Mosquitto for the multi-node benchmark, configured as an operator would (`cloud mosquitto-config --dir`,
 * then `mosquitto -c DIR/mosquitto.conf`), with the hubs' clients in its dynamic-security state, and able to
 * restart on the same port and state (test/helpers/mosquitto-server.ts cannot: its stop removes the
 * directory). As root it runs as the `mosquitto` user, as the test helper does.
 */
export interface BenchMosquitto {
  url: string
  /** Its niceness: BROKER_NICE when the benchmark runs as root, else 0 (only root may raise a priority). */
  nice: number
  dir: string
  passwordFile: string
  pid(): number
  /** SIGTERM, then a start on the same port and state; when each happened (wall-clock ms). */
  restart(): Promise<Restart>
  stop(): Promise<void>
}

export interface Restart {
  /** SIGTERM sent: the broker closes every connection. */
  stopAt: number
  /** The process ended. */
  downAt: number
  /** It accepts connections again. */
  upAt: number
}

/**
 * The broker's priority, as the unit for it in docs/several-nodes.md sets (`Nice=-10`). Here it shares two cores with the nodes,
 * PostgreSQL and the simulated hubs; at the same priority as they, it got 12–25 % of a core while runnable
 * throughout a fleet's reconnect, took 2–4 s to stop and 3–4 s to start, and its accept queue of 100 (Mosquitto 2.0
 * listens with that backlog, no setting changes it) stayed full: 100,000 handshakes dropped, thousands of hubs
 * timed out waiting for CONNACK and backed off again, and the last came back 20 s after it listened.
 */
export const BROKER_NICE = -10

export async function startBenchMosquitto(hubs: WorkerHub[]): Promise<BenchMosquitto> {
  const dir = tempDir('bench-mosquitto-')
  const port = await freePort()
  const url = `mqtt://127.0.0.1:${port}`
  const owner = unprivilegedUser('mosquitto')
  let peer: PeerProcess | undefined
  const nice = process.getuid?.() === 0 ? BROKER_NICE : 0
  const stop = async () => {
    await peer?.stop(10_000)
    dir.remove()
  }
  const start = async () => {
    peer = startPeer('mosquitto', ['-c', path.join(dir.path, MOSQUITTO_CONF)], { cwd: dir.path, ...owner })
    // Raised from here, since the broker runs as an unprivileged user when the benchmark runs as root.
    if (nice !== 0) execFileSync('renice', ['-n', String(nice), '-p', String(peer.child.pid)])
    await waitUntilReady(peer, 'mosquitto', () => acceptsConnections(port), 60_000)
  }
  try {
    const written = runCli('cloud/cli.ts', ['mosquitto-config', '--dir', dir.path], {
      MQTT_URL: url,
      DATA_DIR: dir.path,
    })
    if (written.status !== 0) throw new Error(`mosquitto-config failed: ${written.stderr}`)
    const dynsec = path.join(dir.path, DYNSEC_FILE)
    writeFileSync(dynsec, dynsecWithHubs(readFileSync(dynsec, 'utf8'), hubs), { mode: 0o600 })
    if (owner) chownTree(dir.path, owner)
    await start()
  } catch (error) {
    await stop()
    throw error
  }
  return {
    url,
    nice,
    dir: dir.path,
    passwordFile: path.join(dir.path, CLOUD_PASSWORD_FILE),
    pid: () => peer?.child.pid ?? 0,
    async restart() {
      const stopAt = wallNow()
      await peer?.stop(10_000)
      const downAt = wallNow()
      await start()
      return { stopAt, downAt, upAt: wallNow() }
    },
    stop,
  }
}

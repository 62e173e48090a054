import { statSync } from 'node:fs'
import { acceptsConnections, type PeerProcess, startPeer, waitUntilReady } from './peer-process.ts'

/**
 * A real HAProxy for tests (Debian's `haproxy` 2.6), started in the foreground as `haproxy -f <file>` on a
 * configuration the test wrote, listening on 127.0.0.1:`port`. As root (CI) it runs as the owner of the
 * configuration file, as an operator runs it from the directory `cloud mosquitto-config` wrote, never as root.
 */
export interface HaproxyServer {
  port: number
  /** What it wrote to stdout and stderr so far (its log, with `log stderr`). */
  log(): string
  /** Ends it; safe to call twice. */
  stop(): Promise<void>
}

export async function startHaproxy(options: {
  configFile: string
  port: number
  startTimeoutMs?: number
}): Promise<HaproxyServer> {
  const { uid, gid } = statSync(options.configFile)
  const owner = process.getuid?.() === 0 ? { uid, gid } : {}
  const peer: PeerProcess = startPeer('haproxy', ['-f', options.configFile], owner)
  try {
    await waitUntilReady(peer, 'haproxy', () => acceptsConnections(options.port), options.startTimeoutMs)
  } catch (error) {
    await peer.stop()
    throw error
  }
  return { port: options.port, log: peer.output, stop: () => peer.stop() }
}

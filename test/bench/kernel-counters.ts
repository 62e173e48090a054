import { readFileSync } from 'node:fs'

/**
 * TCP counters of this machine's kernel (/proc/net/netstat, `TcpExt:` lines: a line of names, then a line of
 * values), for figures that a listener's accept queue explains: `ListenOverflows` counts handshakes dropped
 * because the queue was full (Mosquitto 2.0 listens with a backlog of 100), `TCPSynRetrans` the SYNs sent
 * again meanwhile (after 1 s, 2 s, 4 s, …). Undefined where the file is not there.
 */
export function tcpExtCounters(): Record<string, number> | undefined {
  let text: string
  try {
    text = readFileSync('/proc/net/netstat', 'utf8')
  } catch {
    return undefined
  }
  const lines = text.split('\n').filter((line) => line.startsWith('TcpExt:'))
  const names = lines[0]?.split(/\s+/).slice(1) ?? []
  const values = lines[1]?.split(/\s+/).slice(1) ?? []
  return Object.fromEntries(names.map((name, i) => [name, Number(values[i])]))
}

/** How much each counter grew from `before` to now. */
export function tcpExtGrowth(
  before: Record<string, number> | undefined,
  names: string[],
): Record<string, number> | undefined {
  const now = tcpExtCounters()
  if (!before || !now) return undefined
  return Object.fromEntries(names.map((name) => [name, (now[name] ?? 0) - (before[name] ?? 0)]))
}

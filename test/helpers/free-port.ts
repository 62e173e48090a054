import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * Where the ports come from: below the kernel's ephemeral range. Port 0 (every test server that needs no
 * fixed port) and each outgoing connection take a port of the ephemeral range, so a port handed out from
 * that range could be taken by a connection of another test before the program told it binds; a CI run
 * failed on that once (`cloud: PORT: ... is already in use`). Linux's default range is 32768–60999
 * (`net.ipv4.ip_local_port_range`).
 */
const LOWEST = 10_000
const ephemeralStart = (() => {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    )
    return Number.isInteger(first) && first > LOWEST + 1_000 ? first : 32_768
  } catch {
    return 32_768
  }
})()
/**
 * Each test worker (vitest's VITEST_POOL_ID, 1 and up) hands out ports from its own slice, in turn, so two
 * test files running at once never get the same port, and one file gets a port again only after its slice's
 * others. A process outside vitest (a benchmark) takes a slice by its pid.
 */
const SLICES = 16
const sliceSize = Math.floor((ephemeralStart - LOWEST) / SLICES)
const poolId = Number(process.env.VITEST_POOL_ID)
const slice = Number.isInteger(poolId) && poolId > 0 ? (poolId - 1) % SLICES : process.pid % SLICES

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * The ports fetch() refuses to connect to ("bad ports", WHATWG Fetch §2.9 "Port blocking"), as Node's fetch
 * (undici) and Chromium do: a server on one of them cannot be reached by the tests' HTTP clients (a CI run
 * failed with `fetch failed: bad port` on 10080).
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
])

/**
 * Hands out the ports `first` to `first + count - 1` in turn from a random one, skipping those taken and
 * fetch's bad ports.
 */
export function portsInTurn(first: number, count: number): () => Promise<number> {
  let next = Math.floor(Math.random() * count)
  return async () => {
    for (let tried = 0; tried < count; tried++) {
      const port = first + (next++ % count)
      if (!BAD_PORTS.has(port) && (await canListen(port))) return port
    }
    throw new Error(`no free port in ${first}–${first + count - 1}`)
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for programs that must be told their port). */
export const freePort = portsInTurn(LOWEST + slice * sliceSize, sliceSize)

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

/** Hands out the ports `first` to `first + count - 1` in turn from a random one, skipping those taken. */
export function portsInTurn(first: number, count: number): () => Promise<number> {
  let next = Math.floor(Math.random() * count)
  return async () => {
    for (let tried = 0; tried < count; tried++) {
      const port = first + (next++ % count)
      if (await canListen(port)) return port
    }
    throw new Error(`no free port in ${first}–${first + count - 1}`)
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for programs that must be told their port). */
export const freePort = portsInTurn(LOWEST + slice * sliceSize, sliceSize)

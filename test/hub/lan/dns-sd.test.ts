import { randomBytes, randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { DnsSdAdvertiser, type DnsSdAdvertiserOptions } from '../../../hub/lan/dns-sd.ts'
import { PRINT_HUB_SERVICE_TYPE, printHubTxt } from '../../../hub/lan/print-hub-service.ts'
import { type AvahiHost, type AvahiLan, type BrowsedService, startAvahiLan } from '../../helpers/avahi.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// Generous: Avahi probes a name three times 250 ms apart before announcing it (RFC 6762 §8.1), and a till
// drops a withdrawn record one second after its goodbye (§10.1).
const SEEN = { timeout: 20_000, interval: 200 }
// A record never withdrawn would stay in the till's cache for its TTL: 75 minutes for the PTR record.
const GONE = { timeout: 20_000, interval: 200 }

let lan: AvahiLan
const advertisers: DnsSdAdvertiser[] = []
/** Every avahi-publish-service pid an advertiser ran. */
const pids = new Set<number>()

beforeAll(async () => {
  lan = await startAvahiLan()
}, 60_000)

afterAll(async () => {
  await lan?.stop()
})

afterEach(async () => {
  for (const advertiser of advertisers.splice(0)) await advertiser.stop()
  expect(livePids(), 'avahi-publish-service processes left running').toEqual([])
  pids.clear()
})

interface LogLine {
  level: number
  msg: string
  [key: string]: unknown
}

function capturedLogger() {
  const lines: LogLine[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  return { logger, lines, warnings: () => lines.filter((line) => line.level === 40) }
}

function advertiser(host: AvahiHost | undefined, options: Partial<DnsSdAdvertiserOptions> = {}) {
  const { logger } = capturedLogger()
  const made = new DnsSdAdvertiser({
    name: uniqueName(),
    port: 8443,
    txt: sampleTxt(),
    logger,
    systemBusAddress: host?.busAddress,
    ...options,
  })
  advertisers.push(made)
  return made
}

/** Records the advertiser's current program pid for the check that none is left. */
function notePid(advertiser: DnsSdAdvertiser): void {
  if (advertiser.pid !== undefined) pids.add(advertiser.pid)
}

/** The noted pids still running, and any avahi-publish-service this test process is the parent of. */
function livePids(): number[] {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        // pid (comm) state ppid ...; comm is cut to 15 characters
        const [, comm, rest] = /^\d+ \((.*)\) (.*)$/.exec(stat) ?? []
        return comm === 'avahi-publish-s' && Number(rest?.split(' ')[1]) === process.pid
      } catch {
        return false // it ended meanwhile
      }
    })
    .map(Number)
  const noted = [...pids].filter((pid) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  })
  return [...new Set([...noted, ...children])]
}

function uniqueName(): string {
  return `Bakery front hub ${randomBytes(3).toString('hex')}`
}

function sampleTxt(certificateDer: Uint8Array = randomBytes(300)): Record<string, string> {
  return printHubTxt({ hubId: randomUUID(), accountId: randomUUID(), certificateDer })
}

async function seenBy(host: AvahiHost, name: string): Promise<BrowsedService> {
  const found = (await host.browse(PRINT_HUB_SERVICE_TYPE)).find((service) => service.name === name)
  expect(found, `"${name}" browsed on ${host.hostName}`).toBeDefined()
  return found!
}

async function notSeenBy(host: AvahiHost, name: string): Promise<void> {
  const names = (await host.browse(PRINT_HUB_SERVICE_TYPE)).map((service) => service.name)
  expect(names).not.toContain(name)
}

describe('DnsSdAdvertiser with a real avahi-daemon', () => {
  it('advertises the type, port and TXT record, which another machine on the LAN browses', async () => {
    const name = uniqueName()
    const txt = sampleTxt()
    const hub = advertiser(lan.hub, { name, txt })
    await hub.start()
    notePid(hub)

    const service = await vi.waitFor(() => seenBy(lan.till, name), SEEN)
    expect(service).toEqual({
      name,
      type: PRINT_HUB_SERVICE_TYPE,
      hostName: `${lan.hub.hostName}.local`,
      address: lan.hub.address,
      port: 8443,
      txt,
    })
    expect(Object.keys(service.txt).sort()).toEqual(
      ['account_id', 'api', 'cert_sha256', 'hub_id', 'tls', 'v'].sort(),
    )
    expect(service.txt).toMatchObject({ api: '/api/v1', v: '1', tls: '1' })
    expect(service.txt.cert_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(hub.publishedName).toBe(name)
  })

  it('gives a second hub with the same name on the LAN a distinct name', async () => {
    const name = uniqueName()
    const first = advertiser(lan.hub, { name })
    await first.start()
    notePid(first)
    await vi.waitFor(() => expect(first.publishedName).toBe(name), SEEN)

    const second = advertiser(lan.till, { name })
    await second.start()
    notePid(second)

    await vi.waitFor(async () => {
      const names = (await lan.hub.browse(PRINT_HUB_SERVICE_TYPE)).map((service) => service.name)
      expect(names).toEqual(expect.arrayContaining([name, `${name} #2`]))
    }, SEEN)
    // The other daemon may list the name before avahi-publish-service has printed it to its advertiser.
    await vi.waitFor(() => expect(second.publishedName).toBe(`${name} #2`), SEEN)
    expect(first.publishedName).toBe(name)
  })

  it('gives a second service with the same name on the same machine a distinct name', async () => {
    const name = uniqueName()
    const first = advertiser(lan.hub, { name })
    await first.start()
    notePid(first)
    await vi.waitFor(() => expect(first.publishedName).toBe(name), SEEN)

    const second = advertiser(lan.hub, { name, retryDelayMs: 50 })
    await second.start()
    notePid(second)

    await vi.waitFor(async () => {
      const names = (await lan.till.browse(PRINT_HUB_SERVICE_TYPE)).map((service) => service.name)
      expect(names).toEqual(expect.arrayContaining([name, `${name} #2`]))
    }, SEEN)
    notePid(second)
    await vi.waitFor(() => expect(second.publishedName).toBe(`${name} #2`), SEEN)
  })

  it('withdraws the service on stop: the till hears the goodbye and no longer lists it', async () => {
    const name = uniqueName()
    const hub = advertiser(lan.hub, { name })
    await hub.start()
    notePid(hub)
    await vi.waitFor(() => seenBy(lan.till, name), SEEN)

    await hub.stop()
    expect(hub.pid).toBeUndefined()
    expect(livePids()).toEqual([])
    await vi.waitFor(() => notSeenBy(lan.till, name), GONE)
  })

  it('publishes new TXT values on update (a new certificate)', async () => {
    const name = uniqueName()
    const hub = advertiser(lan.hub, { name })
    await hub.start()
    notePid(hub)
    await vi.waitFor(() => seenBy(lan.till, name), SEEN)

    const renewed = sampleTxt(randomBytes(310))
    await hub.update(renewed)
    notePid(hub)
    await vi.waitFor(async () => {
      expect((await seenBy(lan.till, name)).txt).toEqual(renewed)
    }, SEEN)
  })

  it('runs one program when updates and a stop overlap', async () => {
    const name = uniqueName()
    const hub = advertiser(lan.hub, { name })
    await hub.start()
    const last = sampleTxt()
    await Promise.all([hub.update(sampleTxt()), hub.update(sampleTxt()), hub.update(last)])
    notePid(hub)
    expect(livePids()).toEqual([hub.pid])
    await vi.waitFor(async () => expect((await seenBy(lan.till, name)).txt).toEqual(last), SEEN)

    await Promise.all([hub.update(sampleTxt()), hub.stop()])
    expect(livePids()).toEqual([])
  })

  it('keeps the service published across an avahi-daemon restart', async () => {
    const name = uniqueName()
    const { logger, warnings } = capturedLogger()
    const hub = advertiser(lan.hub, { name, logger })
    await hub.start()
    notePid(hub)
    await vi.waitFor(() => seenBy(lan.till, name), SEEN)
    const publisherPid = hub.pid

    try {
      await lan.hub.stopDaemon()
      // The daemon sends goodbyes for everything it published as it shuts down.
      await vi.waitFor(() => notSeenBy(lan.till, name), GONE)
      await vi.waitFor(() => expect(warnings().length).toBeGreaterThan(0), SEEN)
    } finally {
      await lan.hub.startDaemon()
    }

    await vi.waitFor(() => seenBy(lan.till, name), SEEN)
    // Avahi's client library in the same program registered the service again.
    expect(hub.pid).toBe(publisherPid)
    await vi.waitFor(() => expect(hub.publishedName).toBe(name), SEEN)
  })

  it('logs a warning and does not throw when no avahi-daemon is reachable', async () => {
    const noBus = tempDir('print-hub-no-bus-')
    try {
      const { logger, lines, warnings } = capturedLogger()
      const hub = new DnsSdAdvertiser({
        name: uniqueName(),
        port: 8443,
        txt: sampleTxt(),
        logger,
        systemBusAddress: `unix:path=${path.join(noBus.path, 'no-such-bus')}`,
        retryDelayMs: 50,
      })
      advertisers.push(hub)
      await expect(hub.start()).resolves.toBeUndefined()
      notePid(hub)

      await vi.waitFor(() => {
        expect(warnings()).toContainEqual(
          expect.objectContaining({
            msg: 'DNS-SD: the LAN print API is not advertised',
            avahi: 'Failed to create client object: Daemon not running',
          }),
        )
      }, SEEN)
      // It runs the program again later; the next failures are logged at debug, not as more warnings.
      const exits = () => lines.filter((line) => line.msg.startsWith('DNS-SD: the Avahi publisher exited'))
      await vi.waitFor(() => expect(exits().length).toBeGreaterThanOrEqual(2), SEEN)
      expect(warnings()).toHaveLength(1)
      expect(hub.publishedName).toBeUndefined()
      await hub.stop()
      expect(livePids()).toEqual([])
    } finally {
      noBus.remove()
    }
  })

  it('logs a warning when avahi-publish-service is not installed', async () => {
    const { logger, warnings } = capturedLogger()
    const hub = advertiser(lan.hub, { logger, program: '/nonexistent/avahi-publish-service' })
    await expect(hub.start()).resolves.toBeUndefined()
    await vi.waitFor(() => {
      expect(warnings()).toContainEqual(
        expect.objectContaining({ program: '/nonexistent/avahi-publish-service' }),
      )
    }, SEEN)
  })

  it('rejects TXT keys and values DNS-SD cannot carry', () => {
    const { logger } = capturedLogger()
    const options = { name: 'hub', port: 8443, logger }
    expect(() => new DnsSdAdvertiser({ ...options, txt: { 'a=b': '1' } })).toThrow(RangeError)
    expect(() => new DnsSdAdvertiser({ ...options, txt: { k: 'x'.repeat(254) } })).toThrow(RangeError)
    expect(() => new DnsSdAdvertiser({ ...options, port: 0, txt: {} })).toThrow(RangeError)
  })
})

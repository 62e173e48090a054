import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { PRINT_HUB_SERVICE_TYPE } from './print-hub-service.ts'

export interface DnsSdAdvertiserOptions {
  /** The instance name, the hub's name. Avahi makes it unique on a collision ("Bakery front hub #2"). */
  name: string
  port: number
  /** The TXT record, key → value. */
  txt: Record<string, string>
  logger: Logger
  /** Defaults to `_print-hub._tcp`. */
  type?: string
  /** Avahi's publishing client (Debian avahi-utils); `avahi-publish-service` on the PATH by default. */
  program?: string
  /** The D-Bus system bus avahi-daemon is on (DBUS_SYSTEM_BUS_ADDRESS); the default one when absent. */
  systemBusAddress?: string
  /** The first wait before running the program again after it exited; it doubles up to a minute. */
  retryDelayMs?: number
}

const MAX_RETRY_DELAY_MS = 60_000
const STOP_GRACE_MS = 3_000
/** RFC 6763 §4.1.1: an instance name is one DNS label of at most 63 octets of UTF-8. */
const MAX_INSTANCE_NAME_BYTES = 63
/** RFC 6763 §6.1: each TXT string is at most 255 octets. */
const MAX_TXT_STRING_BYTES = 255

/**
 * Advertises the hub's LAN print API over DNS-SD on mDNS (RFC 6762, RFC 6763) through the system's
 * avahi-daemon, by keeping Avahi's `avahi-publish-service` running. Avahi's client library in that program
 * probes the name, renames the service on a collision, and with `--no-fail` waits for a daemon that is not
 * there yet and registers again after the daemon restarts. Stopping the program makes the daemon withdraw the
 * service, which sends goodbye packets (RFC 6762 §10.1).
 *
 * Without Avahi (no daemon, no system bus, the program not installed) the hub works on: the failure is logged
 * as a warning and the program is tried again later.
 */
export class DnsSdAdvertiser {
  readonly #o: DnsSdAdvertiserOptions
  readonly #log: Logger
  readonly #name: string
  /** How many times another service of this machine held the name; Avahi renames only on a network collision. */
  #localCollisions = 0
  #txt: Record<string, string>
  #child: ChildProcess | undefined
  #running = false
  #retryTimer: NodeJS.Timeout | undefined
  #retryDelayMs: number
  #publishedName: string | undefined
  /** Stops and updates, one after the other, so that one program runs at most. */
  #changes: Promise<void> = Promise.resolve()
  /** Whether the current run of failures was logged as a warning; repeats are logged at debug. */
  #failureWarned = false

  constructor(options: DnsSdAdvertiserOptions) {
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535)
      throw new RangeError(`DNS-SD port must be 1-65535 (got ${options.port})`)
    this.#o = options
    this.#log = options.logger.child({ part: 'dns-sd' })
    this.#name = options.name.trim() || 'Print hub'
    this.#txt = checkedTxt(options.txt)
    this.#retryDelayMs = options.retryDelayMs ?? 1_000
  }

  /** The name Avahi established the service under, once it has. */
  get publishedName(): string | undefined {
    return this.#publishedName
  }

  /** The pid of the running avahi-publish-service, if one is running. */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** Starts publishing; resolves once the program is started, before Avahi has announced the service. */
  async start(): Promise<void> {
    if (this.#running) return
    this.#running = true
    this.#spawn()
  }

  /** Withdraws the service (goodbye packets) and ends the program. */
  stop(): Promise<void> {
    return this.#serially(async () => {
      this.#running = false
      clearTimeout(this.#retryTimer)
      await this.#endChild()
    })
  }

  /** New TXT values (a new certificate): the service is published again with them. */
  update(txt: Record<string, string>): Promise<void> {
    const checked = checkedTxt(txt)
    return this.#serially(async () => {
      this.#txt = checked
      if (!this.#running) return
      clearTimeout(this.#retryTimer)
      await this.#endChild()
      if (this.#running) this.#spawn()
    })
  }

  #serially(change: () => Promise<void>): Promise<void> {
    const done = this.#changes.then(change)
    this.#changes = done.catch(() => {})
    return done
  }

  #spawn(): void {
    const {
      program = 'avahi-publish-service',
      systemBusAddress,
      port,
      type = PRINT_HUB_SERVICE_TYPE,
    } = this.#o
    const txtStrings = Object.entries(this.#txt).map(([key, value]) => `${key}=${value}`)
    const name = instanceName(this.#name, this.#localCollisions)
    const args = ['--verbose', '--no-fail', '--service', '--', name, type, String(port), ...txtStrings]
    const env = systemBusAddress ? { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: systemBusAddress } : process.env
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    this.#child = child
    this.#publishedName = undefined
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream }).on('line', (line) => {
        if (this.#child === child) this.#onOutput(line)
      })
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (this.#child !== child) return
      this.#child = undefined
      if (error.code === 'ENOENT') {
        this.#log.warn(
          { program },
          'DNS-SD: the LAN print API is not advertised: the program is missing (Debian package avahi-utils)',
        )
        return
      }
      this.#failed({ err: error }, 'DNS-SD: could not run the Avahi publisher')
    })
    // 'close', not 'exit': the program's last lines have been read by then.
    child.once('close', (code, signal) => {
      if (this.#child !== child) return
      this.#child = undefined
      this.#failed(
        { code, signal },
        'DNS-SD: the Avahi publisher exited; the LAN print API is not advertised',
      )
    })
  }

  #onOutput(line: string): void {
    const established = /^Established under name '(.*)'$/.exec(line)
    if (established) {
      this.#publishedName = established[1]
      this.#failureWarned = false
      this.#retryDelayMs = this.#o.retryDelayMs ?? 1_000
      this.#log.info({ name: established[1], port: this.#o.port }, 'DNS-SD: LAN print API advertised')
      return
    }
    const collision = /^Name collision, picking new name '(.*)'/.exec(line)
    if (collision) {
      this.#log.info({ name: collision[1] }, 'DNS-SD: name taken on the LAN, renamed')
      return
    }
    if (line.endsWith('Local name collision')) {
      // The program exits; it is run again with the next name, as Avahi names one after a collision.
      this.#localCollisions++
      this.#log.info('DNS-SD: name taken by another service of this machine, renaming')
      return
    }
    if (line.startsWith('Server version:')) {
      this.#log.debug({ avahi: line }, 'DNS-SD: connected to avahi-daemon')
      return
    }
    // "Waiting for daemon ...", "Disconnected, reconnecting ...", "Failed to ...": the program keeps waiting
    // for the daemon or exits, and either way the service is not on the LAN now.
    this.#publishedName = undefined
    this.#failed({ avahi: line }, 'DNS-SD: the LAN print API is not advertised')
  }

  /** Logs a failure (a warning the first time in a row) and, if the program is gone, runs it again later. */
  #failed(details: object, message: string): void {
    if (this.#failureWarned) this.#log.debug(details, message)
    else this.#log.warn(details, message)
    this.#failureWarned = true
    if (!this.#running || this.#child !== undefined) return
    const delay = this.#retryDelayMs
    this.#retryDelayMs = Math.min(delay * 2, MAX_RETRY_DELAY_MS)
    clearTimeout(this.#retryTimer)
    this.#retryTimer = setTimeout(() => {
      if (this.#running && this.#child === undefined) this.#spawn()
    }, delay)
    this.#retryTimer.unref()
  }

  /** SIGTERM (Avahi withdraws the service), SIGKILL after a grace period; resolves once it has exited. */
  async #endChild(): Promise<void> {
    const child = this.#child
    this.#child = undefined
    this.#publishedName = undefined
    if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGTERM')
    const ended = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)])
    if (!ended) {
      child.kill('SIGKILL')
      await exited
    }
  }
}

/** The hub's name, " #2" after one collision and so on, cut to one DNS label on a character boundary. */
function instanceName(name: string, collisions: number): string {
  const suffix = collisions === 0 ? '' : ` #${collisions + 1}`
  let trimmed = name
  while (Buffer.byteLength(trimmed + suffix) > MAX_INSTANCE_NAME_BYTES)
    trimmed = [...trimmed].slice(0, -1).join('')
  return trimmed + suffix
}

/** Keys are printable ASCII without `=` (RFC 6763 §6.4); each `key=value` fits one TXT string. */
function checkedTxt(txt: Record<string, string>): Record<string, string> {
  for (const [key, value] of Object.entries(txt)) {
    if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(key)) throw new RangeError(`DNS-SD TXT key "${key}" is not allowed`)
    if (Buffer.byteLength(`${key}=${value}`) > MAX_TXT_STRING_BYTES)
      throw new RangeError(`DNS-SD TXT value of "${key}" is longer than a TXT string allows`)
  }
  return { ...txt }
}

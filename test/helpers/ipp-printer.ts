import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { freePort } from './free-port.ts'
import { tempDir } from './temp-dir.ts'

/**
 * A real IPP Everywhere printer for tests: CUPS's `ippeveprinter` (Debian cups-ipp-utils) on loopback, in a
 * temporary directory, with a private D-Bus system bus (it will not start without one: STACK-NOTES, real
 * peers). Jobs finish at once; `hold()` keeps them processing and `failJobs()` makes them abort. Files it
 * receives stay in `spoolDir` as `<job-id>-<job-name>.<ext>`.
 */
export interface IppEvePrinter {
  /** ipp://localhost:PORT/ipp/print */
  uri: string
  /** The same printer over TLS (ipps://); only with `tls: true`. */
  ippsUri: string
  /** The printer's self-signed certificate, with `tls: true`: trust it as `{ ca }`. */
  certificate: Buffer | null
  spoolDir: string
  /** Jobs that start from now on stay `processing` until release(). */
  hold(): void
  release(): void
  /** Jobs that end from now on end `aborted` (the print command fails). */
  failJobs(fail: boolean): void
  /** The spooled document of a job, or undefined before it lands. */
  spooledFile(jobId: number): string | undefined
  /** A job's attributes as the printer reports them to ipptool (name → value as ipptool prints it). */
  jobAttributes(jobId: number): Promise<Record<string, string>>
  /** What ippeveprinter has logged so far: one line per request (`localhost Print-Job server-error-busy`). */
  log(): string
  /** Ends ippeveprinter and its D-Bus and removes the directory; safe to call twice. */
  stop(): Promise<void>
}

export interface IppEvePrinterOptions {
  /** document-format-supported, e.g. ['application/pdf', 'image/pwg-raster'] (`-f`). */
  formats: string[]
  /** A colour printer (`-s 10,5`: a colour speed makes it one); monochrome otherwise. */
  color?: boolean
  /** Two-sided printing (`-2`). */
  duplex?: boolean
  /** Serve ipps:// too, with a fresh self-signed certificate for localhost (`-K`). */
  tls?: boolean
  /** printer-name and printer-info. */
  name?: string
}

const run = promisify(execFile)
const START_TIMEOUT_MS = 10_000
const IPPTOOL_TIMEOUT_MS = 10_000

/** The system bus configuration, listening on our own socket, in the foreground, without system services. */
function busConfig(socketPath: string): string {
  return readFileSync('/usr/share/dbus-1/system.conf', 'utf8')
    .replace(/<listen>[^<]*<\/listen>/, `<listen>unix:path=${socketPath}</listen>`)
    .replace(/<user>[^<]*<\/user>|<fork\/>|<pidfile>[^<]*<\/pidfile>|<syslog\/>/g, '')
    .replace(/<servicehelper>[^<]*<\/servicehelper>|<standard_system_servicedirs\/>/g, '')
}

/** ippeveprinter's print command (`-c`): runs for each job with its file. */
function printCommand(dir: string): string {
  return [
    '#!/bin/sh',
    `while [ -e '${dir}/hold' ]; do sleep 0.02; done`,
    `if [ -e '${dir}/fail' ]; then echo 'ERROR: failing on purpose' >&2; exit 1; fi`,
    'exit 0',
    '',
  ].join('\n')
}

/** The Get-Job-Attributes request ipptool sends. */
const GET_JOB_ATTRIBUTES_TEST = `{
  NAME "Get-Job-Attributes"
  OPERATION Get-Job-Attributes
  GROUP operation-attributes-tag
  ATTR charset attributes-charset utf-8
  ATTR naturalLanguage attributes-natural-language en
  ATTR uri printer-uri $uri
  ATTR integer job-id $job_id
  ATTR keyword requested-attributes all
  STATUS successful-ok
}
`

function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // Its own process group, so that stop() also ends the print command it may be running.
  return spawn(command, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {
      // already gone
    }
  }
  signalGroup('SIGTERM')
  const stopped = await Promise.race([exited.then(() => true), sleep(3_000).then(() => false)])
  if (!stopped) {
    signalGroup('SIGKILL')
    await exited
  }
}

function collectOutput(child: ChildProcess): () => string {
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  return () => output
}

/** Resolves once the bus prints its address (it listens from then on). */
function busReady(bus: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    bus.stdout?.once('data', () => resolve())
    bus.once('exit', (code) => reject(new Error(`dbus-daemon exited (${code}) before it listened`)))
  })
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Waits until the printer accepts connections; rejects with its output if it exits first. */
async function printerListening(printer: ChildProcess, port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (printer.exitCode !== null || printer.signalCode !== null)
      throw new Error(`ippeveprinter exited before it listened: ${output()}`)
    if (await accepts(port)) return
    await sleep(25)
  }
  throw new Error(`ippeveprinter did not listen on port ${port}: ${output()}`)
}

async function selfSignedCertificate(keysDir: string): Promise<Buffer> {
  // ippeveprinter (GnuTLS) looks for <keypath>/<hostname>.crt and .key.
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost',
    '-days',
    '2',
    '-keyout',
    path.join(keysDir, 'localhost.key'),
    '-out',
    path.join(keysDir, 'localhost.crt'),
  ])
  return readFileSync(path.join(keysDir, 'localhost.crt'))
}

export async function startIppEvePrinter(options: IppEvePrinterOptions): Promise<IppEvePrinter> {
  const dir = tempDir('print-hub-ippeve-')
  const spoolDir = path.join(dir.path, 'spool')
  const keysDir = path.join(dir.path, 'keys')
  const busSocket = path.join(dir.path, 'system_bus_socket')
  let bus: ChildProcess | undefined
  let printer: ChildProcess | undefined
  const stop = async () => {
    await stopProcess(printer)
    await stopProcess(bus)
    dir.remove()
  }
  try {
    for (const sub of [spoolDir, keysDir]) mkdirSync(sub)
    writeFileSync(path.join(dir.path, 'bus.conf'), busConfig(busSocket))
    writeFileSync(path.join(dir.path, 'print-command.sh'), printCommand(dir.path), { mode: 0o755 })
    writeFileSync(path.join(dir.path, 'get-job-attributes.test'), GET_JOB_ATTRIBUTES_TEST)
    const certificate = options.tls ? await selfSignedCertificate(keysDir) : null

    bus = startProcess(
      'dbus-daemon',
      [`--config-file=${path.join(dir.path, 'bus.conf')}`, '--nofork', '--print-address'],
      process.env,
    )
    await busReady(bus)

    const env = { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${busSocket}` }
    const argsFor = (port: number) => [
      ...['-n', 'localhost'], // STACK-NOTES: -n 127.0.0.1 fails without a ::1 line in /etc/hosts
      ...['-p', String(port)],
      '-k', // keep the files it receives
      ...['-d', spoolDir],
      ...['-c', path.join(dir.path, 'print-command.sh')],
      ...['-f', options.formats.join(',')],
      ...['-s', options.color ? '10,5' : '10'],
      ...(options.duplex ? ['-2'] : []),
      ...(options.tls ? ['-K', keysDir] : []),
      ...['-r', 'off'], // no DNS-SD registration: there is no avahi-daemon on the bus
      options.name ?? 'print-hub-test',
    ]
    // The port was free a moment ago; another program may take it first, so a failed start tries another.
    let port = 0
    let log = () => ''
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      printer = startProcess('ippeveprinter', argsFor(port), env)
      log = collectOutput(printer)
      try {
        await printerListening(printer, port, log)
        break
      } catch (error) {
        await stopProcess(printer)
        if (attempt === 3) throw error
      }
    }

    const uri = `ipp://localhost:${port}/ipp/print`
    return {
      uri,
      ippsUri: `ipps://localhost:${port}/ipp/print`,
      certificate,
      spoolDir,
      hold: () => writeFileSync(path.join(dir.path, 'hold'), ''),
      release: () => rmSync(path.join(dir.path, 'hold'), { force: true }),
      failJobs: (fail) =>
        fail
          ? writeFileSync(path.join(dir.path, 'fail'), '')
          : rmSync(path.join(dir.path, 'fail'), { force: true }),
      spooledFile: (jobId) => {
        if (!existsSync(spoolDir)) return undefined
        const name = readdirSync(spoolDir).find(
          (file) => file.startsWith(`${jobId}-`) && !file.endsWith('.prn'),
        )
        return name === undefined ? undefined : path.join(spoolDir, name)
      },
      jobAttributes: async (jobId) => {
        // Bounded: a printer that does not answer fails the test that asked instead of hanging it.
        const { stdout } = await run(
          'ipptool',
          ['-tv', ...['-d', `job_id=${jobId}`], uri, path.join(dir.path, 'get-job-attributes.test')],
          { timeout: IPPTOOL_TIMEOUT_MS },
        )
        return parseIpptoolAttributes(stdout)
      },
      log,
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The attributes of the response in ipptool's verbose output (`name (syntax) = value` after RECEIVED). */
function parseIpptoolAttributes(output: string): Record<string, string> {
  const response = output.slice(output.indexOf('RECEIVED:'))
  const attributes: Record<string, string> = {}
  for (const match of response.matchAll(/^\s+([a-z][-a-z0-9]*) \([^)]+\) = (.*)$/gm)) {
    attributes[match[1]!] = match[2]!
  }
  return attributes
}

import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'

/**
 * A whole ARM machine for the appliance boot test: `qemu-system-aarch64 -M virt` (TCG, no KVM on an x86
 * host) booting a card image with its own kernel and initrd, its serial console captured, a USB serial
 * adapter whose far end is a TCP printer on the host's loopback, and a network that reaches only the host
 * ports it is given.
 *
 * The network. `-netdev user` (slirp) with `restrict=on`: QEMU's manual (qemu-system(1), "-netdev user",
 * `restrict=on|off`) says the guest "will not be able to contact the host and no guest IP packets will be
 * routed over the host to the outside. This option does not affect any explicitly set forwarding rules." In
 * libslirp (4.7 in Debian 12) that is: a TCP SYN for which no socket exists is answered with a reset unless its
 * destination address and port are a `guestfwd` rule's (src/tcp_input.c, `if (slirp->restricted)`), and UDP
 * is dropped except DHCP and TFTP to the virtual host (src/udp.c). So the guest gets its address by DHCP
 * (10.0.2.15), has no DNS (10.0.2.3 is UDP) and reaches exactly the `guestfwd` address:port pairs. The check is
 * IPv4-only in libslirp ("TODO: IPv6"), hence `ipv6=off`.
 *
 * Each forward is `guestfwd=tcp:10.0.2.100:GUEST_PORT-cmd:socat - TCP:127.0.0.1:HOST_PORT`. The `cmd:` form
 * runs the command once per guest connection, its stdin/stdout the connection (libslirp src/misc.c
 * `fork_exec`: g_shell_parse_argv, then g_spawn_async with the socket as fds 0-2). The other form,
 * `-tcp:HOST:PORT`, is one chardev opened when QEMU starts and shared by every guest connection for QEMU's
 * lifetime (the manual: "open 10.10.1.1:4321 on bootup, connect 10.0.2.100:1234 to it whenever the guest
 * accesses it"): no good for HTTP and MQTT, which open and reopen connections. socat connects to 127.0.0.1
 * only: the host's loopback is the only place the guest's traffic can land. 10.0.2.100 is the address in
 * the manual's example: any address of the guest's 10.0.2.0/24 but the host (.2), the DNS server (.3) and
 * the DHCP pool (.15-.31) would do.
 *
 * The printer. `-device usb-serial` is QEMU's FTDI FT232 (hw/usb/dev-serial.c): the guest kernel's
 * `ftdi_sio` (usbserial) makes it /dev/ttyUSB0, group dialout by udev's 50-udev-default.rules. Its chardev
 * is a TCP client (`server=off`) of a printer simulator listening on 127.0.0.1 (test/simulators/
 * printer-simulator.ts, unchanged): the bytes the guest writes to /dev/ttyUSB0 arrive at the simulator as one
 * TCP connection, and its status replies go back to the guest. QEMU attaches the USB device only while the
 * chardev is connected (dev-serial.c, `usb_serial_event`: CHR_EVENT_OPENED attaches, CHR_EVENT_CLOSED
 * detaches), so closing the simulator unplugs the printer.
 */
export interface GuestForward {
  /** The port the guest connects to on GUEST_HOST. */
  guestPort: number
  /** The port on the host's 127.0.0.1 that connection lands on. */
  hostPort: number
}

/** The address the guest reaches every forward at (QEMU's manual uses it for guestfwd). */
export const GUEST_HOST = '10.0.2.100'

export interface QemuMachineOptions {
  /** The card image, raw. Written to unless `overlay` is set. */
  image: string
  kernel: string
  initrd: string
  /** Where the console log, the QMP socket and the overlay go; the caller removes it. */
  dir: string
  /** The kernel's root= (default LABEL=RASPIROOT, Debian's Raspberry Pi images' root label). */
  root?: string
  /** More kernel parameters. */
  append?: string[]
  /** Guest RAM in MiB (default 1024, a Raspberry Pi 3's). */
  memoryMb?: number
  /** Virtual CPUs (default 2: TCG runs one host thread per CPU, and this machine has 2 cores). */
  cpus?: number
  forwards?: GuestForward[]
  /**
   * A port on the host's 127.0.0.1 forwarded to the guest's SSH server (`hostfwd=tcp:127.0.0.1:PORT-:22`, a
   * connection from the host in; `restrict=on` leaves explicit forwards alone). None: no way in.
   */
  sshPort?: number
  /** The TCP port on 127.0.0.1 of the printer behind the guest's USB serial adapter; none: no adapter. */
  usbSerialPort?: number
  /**
   * Boot a qcow2 overlay of the image (`qemu-img create -b`), kept in `dir` across reboots, so that the
   * image itself stays as built. Default true.
   */
  overlay?: boolean
}

export interface WaitOptions {
  timeoutMs?: number
  /** Look only at console lines from this index on (`lineCount()` taken earlier); default: this boot's. */
  from?: number
}

export interface QemuMachine {
  /** The qemu-system-aarch64 arguments of every boot. */
  readonly args: readonly string[]
  /** The console log file (every boot's, each headed by a `=== boot N` line). */
  readonly consoleLog: string
  /** Console lines so far, escape sequences and carriage returns removed. */
  lines(): readonly string[]
  lineCount(): number
  /** The first console line matching `pattern` (this boot's by default); rejects on a timeout or a panic. */
  waitForConsole(pattern: RegExp | string, options?: WaitOptions): Promise<string>
  /** Types on the serial console (e.g. a login). */
  type(text: string): void
  /** A QMP command's `return` value. */
  qmp(command: string, args?: Record<string, unknown>): Promise<unknown>
  /** Milliseconds since this boot's QEMU started. */
  uptimeMs(): number
  /** The guest's memory as QEMU holds it: the QEMU process's resident set, in KiB. */
  residentKiB(): number | null
  /**
   * Presses the power button (QMP `system_powerdown`: the virt board's GPIO power key, which systemd-logind
   * turns into a poweroff) and waits for QEMU to exit; kills it after `timeoutMs` (default 120 s). Resolves
   * with whether the guest powered off by itself.
   */
  powerDown(timeoutMs?: number): Promise<boolean>
  /** `powerDown`, then a new QEMU on the same disk: a power cycle, as unplugging a Pi is. */
  reboot(timeoutMs?: number): Promise<void>
  /** Stops QEMU (power button, then kill) and every process this started. Safe to call twice. */
  close(): Promise<void>
}

const QEMU = 'qemu-system-aarch64'
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal sequences systemd colours its status with
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]/g
/** Console lines after which waiting is pointless. */
const FATAL = /Kernel panic|end Kernel panic|Gave up waiting for root|ALERT! .* does not exist/

/** Why the machine cannot run here, or null. */
export function qemuMissing(): string | null {
  for (const tool of [QEMU, 'qemu-img', 'socat']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' })
    if (found.status !== 0)
      return `${tool} is not installed (apt-get install qemu-system-arm qemu-utils socat)`
  }
  return null
}

/** The arguments of one boot (logged at the head of each boot in the console log). */
export function qemuArguments(options: QemuMachineOptions, disk: { file: string; format: 'raw' | 'qcow2' }) {
  const forwards = (options.forwards ?? []).map(
    (f) => `guestfwd=tcp:${GUEST_HOST}:${f.guestPort}-cmd:socat - TCP:127.0.0.1:${f.hostPort}`,
  )
  if (options.sshPort !== undefined) forwards.push(`hostfwd=tcp:127.0.0.1:${options.sshPort}-:22`)
  const append = [
    `root=${options.root ?? 'LABEL=RASPIROOT'}`,
    'rw',
    'rootwait',
    // The PL011 UART, the virt board's only serial port: the kernel's and systemd's messages, and a getty.
    'console=ttyAMA0',
    ...(options.append ?? []),
  ]
  const args = [
    '-M',
    'virt',
    // A Raspberry Pi 4's core. `max` would also emulate pointer authentication, slowly under TCG.
    '-cpu',
    'cortex-a72',
    '-smp',
    String(options.cpus ?? 2),
    '-m',
    String(options.memoryMb ?? 1024),
    '-nodefaults',
    '-display',
    'none',
    '-kernel',
    options.kernel,
    '-initrd',
    options.initrd,
    '-append',
    append.join(' '),
    '-chardev',
    'stdio,id=console,signal=off',
    '-serial',
    'chardev:console',
    '-qmp',
    `unix:${path.join(options.dir, 'qmp.sock')},server=on,wait=off`,
    // cache=unsafe: the guest's flushes are not passed on to the host's disk (a throwaway disk; what the guest
    // wrote is still in the file when QEMU exits, which is what a power cycle needs).
    '-drive',
    `file=${disk.file},format=${disk.format},if=none,id=disk,cache=unsafe`,
    '-device',
    'virtio-blk-pci,drive=disk',
    '-netdev',
    ['user', 'id=net', 'restrict=on', 'ipv6=off', ...forwards].join(','),
    // romfile=: no iPXE option ROM (efi-virtio.rom, package ipxe-qemu): only firmware would run it, and the
    // kernel is booted directly.
    '-device',
    'virtio-net-pci,netdev=net,romfile=',
    '-device',
    'qemu-xhci,id=xhci',
  ]
  if (options.usbSerialPort !== undefined) {
    args.push(
      '-chardev',
      `socket,id=printer,host=127.0.0.1,port=${options.usbSerialPort},server=off,nodelay=on`,
      '-device',
      'usb-serial,chardev=printer,bus=xhci.0',
    )
  }
  return args
}

/** Boots the machine: resolves once QEMU runs (not once the guest is up: wait on the console for that). */
export async function startQemuMachine(options: QemuMachineOptions): Promise<QemuMachine> {
  const consoleLog = path.join(options.dir, 'console.log')
  let disk: { file: string; format: 'raw' | 'qcow2' } = { file: options.image, format: 'raw' }
  if (options.overlay ?? true) {
    const overlay = path.join(options.dir, 'overlay.qcow2')
    const made = spawnSync(
      'qemu-img',
      ['create', '-q', '-f', 'qcow2', '-F', 'raw', '-b', path.resolve(options.image), overlay],
      { encoding: 'utf8' },
    )
    if (made.status !== 0) throw new Error(`qemu-img create: ${made.stderr || made.error?.message}`)
    disk = { file: overlay, format: 'qcow2' }
  }
  const args = qemuArguments(options, disk)
  writeFileSync(consoleLog, '')

  const lines: string[] = []
  let partial = ''
  let bootStart = 0
  let boots = 0
  let started = 0
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  let stderr = ''
  const listeners = new Set<() => void>()
  let closed = false

  const push = (text: string) => {
    appendFileSync(consoleLog, text)
    partial += text
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    for (const line of parts) lines.push(clean(line))
    for (const listener of [...listeners]) listener()
  }

  const boot = () => {
    boots++
    push(`=== boot ${boots}: ${QEMU} ${args.join(' ')}\n`)
    bootStart = lines.length
    stderr = ''
    started = Date.now()
    // setpriv: QEMU dies with this process, whatever becomes of it.
    const qemu = spawn('setpriv', ['--pdeathsig=KILL', '--', QEMU, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    child = qemu
    qemu.stdout.on('data', (chunk: Buffer) => push(chunk.toString('latin1')))
    qemu.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
      push(chunk.toString('utf8'))
    })
    // The console's stdin: a closed pipe would be read as the end of the console.
    qemu.stdin.on('error', () => {})
    exited = new Promise((resolve) => {
      qemu.once('exit', () => {
        // The next boot's QEMU makes its own; a QMP client must not find this one's meanwhile.
        rmSync(path.join(options.dir, 'qmp.sock'), { force: true })
        if (partial) push('\n')
        for (const listener of [...listeners]) listener()
        resolve()
      })
    })
  }

  const running = () => child !== null && child.exitCode === null && child.signalCode === null

  const qmp = async (command: string, qmpArgs?: Record<string, unknown>) => {
    const socketPath = path.join(options.dir, 'qmp.sock')
    const deadline = Date.now() + 15_000
    while (!existsSync(socketPath) && Date.now() < deadline) await sleep(50)
    const socket = net.connect(socketPath)
    try {
      const reader = jsonLines(socket)
      await reader.next() // the greeting
      socket.write(`${JSON.stringify({ execute: 'qmp_capabilities' })}\n`)
      await reader.reply()
      socket.write(`${JSON.stringify({ execute: command, ...(qmpArgs && { arguments: qmpArgs }) })}\n`)
      return await reader.reply()
    } finally {
      socket.destroy()
    }
  }

  const powerDown = async (timeoutMs = 120_000) => {
    if (!running()) return true
    const qemu = child!
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    const byItself = qmp('system_powerdown')
      .then(() => exited)
      .then(() => true as const)
      .catch(() => false as const)
    const clean = await Promise.race([byItself, timedOut])
    clearTimeout(timer)
    if (!clean && running()) {
      push(`=== ${QEMU} did not exit ${timeoutMs} ms after system_powerdown: killed\n`)
      qemu.kill('SIGKILL')
    }
    await exited
    return clean
  }

  boot()
  await new Promise<void>((resolve, reject) => {
    // QEMU that refuses its arguments exits at once; one that runs opens its QMP socket.
    const socketPath = path.join(options.dir, 'qmp.sock')
    const check = setInterval(() => {
      if (!running()) {
        clearInterval(check)
        reject(new Error(`${QEMU} exited: ${stderr.trim()}`))
      } else if (existsSync(socketPath)) {
        clearInterval(check)
        resolve()
      }
    }, 50)
  })

  return {
    args,
    consoleLog,
    lines: () => lines,
    lineCount: () => lines.length,
    waitForConsole(pattern, waitOptions = {}) {
      const test =
        typeof pattern === 'string'
          ? (line: string) => line.includes(pattern)
          : (line: string) => pattern.test(line)
      let index = waitOptions.from ?? bootStart
      const timeoutMs = waitOptions.timeoutMs ?? 600_000
      return new Promise<string>((resolve, reject) => {
        const done = (error: Error | null, line?: string) => {
          clearTimeout(timer)
          listeners.delete(check)
          if (error) reject(error)
          else resolve(line!)
        }
        const check = () => {
          for (; index < lines.length; index++) {
            const line = lines[index]!
            if (test(line)) return done(null, line)
            if (FATAL.test(line))
              return done(new Error(`the guest failed to boot: ${line} (see ${consoleLog})`))
          }
          // A prompt ("login: ") ends no line until someone types.
          if (index === lines.length && partial && test(clean(partial))) return done(null, clean(partial))
          if (!running())
            done(
              new Error(`${QEMU} exited while waiting for ${pattern} (see ${consoleLog}): ${stderr.trim()}`),
            )
        }
        const timer = setTimeout(
          () => done(new Error(`no console line ${pattern} after ${timeoutMs} ms (see ${consoleLog})`)),
          timeoutMs,
        )
        listeners.add(check)
        check()
      })
    },
    type(text) {
      if (running()) child!.stdin!.write(text)
    },
    qmp,
    uptimeMs: () => Date.now() - started,
    residentKiB() {
      if (!running()) return null
      try {
        const status = readFileSync(`/proc/${child!.pid}/status`, 'utf8')
        const match = /^VmRSS:\s+(\d+) kB/m.exec(status)
        return match ? Number(match[1]) : null
      } catch {
        return null
      }
    },
    powerDown,
    async reboot(timeoutMs) {
      await powerDown(timeoutMs)
      if (closed) throw new Error('the machine is closed')
      boot()
    },
    async close() {
      if (closed) return
      closed = true
      await powerDown(60_000)
    },
  }
}

/** QMP speaks one JSON object a line (QEMU's docs/interop/qmp-spec.rst); events come between replies. */
function jsonLines(socket: net.Socket) {
  let buffered = ''
  const queue: Record<string, unknown>[] = []
  let wake: (() => void) | null = null
  let failure: Error | null = null
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const parts = buffered.split('\n')
    buffered = parts.pop() ?? ''
    for (const part of parts) if (part.trim()) queue.push(JSON.parse(part) as Record<string, unknown>)
    wake?.()
  })
  const stop = (error: Error) => {
    failure = error
    wake?.()
  }
  socket.on('error', stop)
  socket.on('close', () => stop(new Error('QMP connection closed')))
  const next = async (): Promise<Record<string, unknown>> => {
    for (;;) {
      const item = queue.shift()
      if (item) return item
      if (failure) throw failure
      await new Promise<void>((resolve) => {
        wake = resolve
      })
      wake = null
    }
  }
  return {
    next,
    /** The next reply, skipping events; a QMP error becomes an exception. */
    async reply(): Promise<unknown> {
      for (;;) {
        const message = await next()
        if ('event' in message) continue
        if ('error' in message) throw new Error(`QMP: ${JSON.stringify(message.error)}`)
        return message.return
      }
    },
  }
}

function clean(line: string) {
  return line.replace(ANSI, '').replaceAll('\r', '')
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { SerialPort } from 'serialport'
import { ByteSink } from './byte-sink.ts'
import type { TransportPeer } from './transport-contract.ts'

/** Two pseudo-terminals joined by socat: what is written to one is read from the other, like a null modem. */
export interface PtyPair {
  /** The host's end (where the transport under test opens). */
  a: string
  /** The printer's end. */
  b: string
  /** Kills socat (both ends hang up) and waits for it to exit. */
  stop(): Promise<void>
}

/** Starts `socat -d -d pty,raw,echo=0 pty,raw,echo=0` and reads the two /dev/pts paths from its log. */
export function startPtyPair(): Promise<PtyPair> {
  const child: ChildProcess = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return new Promise((resolve, reject) => {
    let log = ''
    const onData = (chunk: Buffer) => {
      log += chunk.toString()
      // "N PTY is /dev/pts/3" twice, then "N starting data transfer loop" once both are ready.
      const paths = [...log.matchAll(/PTY is (\/dev\/pts\/\d+)/g)].map((m) => m[1]!)
      if (paths.length === 2 && log.includes('starting data transfer loop')) {
        child.stderr!.off('data', onData)
        child.stderr!.resume()
        resolve({ a: paths[0]!, b: paths[1]!, stop })
      }
    }
    child.stderr!.on('data', onData)
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`socat exited (${code}) before it was ready: ${log}`)))
  })
}

/**
 * How many bytes wait unread in a pseudo-terminal's input queue (FIONREAD, tty_ioctl(4)), read without taking
 * them: what has reached `a` through socat. Node has no ioctl; Python's fcntl does.
 */
export function bytesWaiting(tty: string): number {
  const script =
    'import array,fcntl,os,sys,termios\n' +
    'fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)\n' +
    "n = array.array('i', [0])\n" +
    'fcntl.ioctl(fd, termios.FIONREAD, n)\n' +
    'print(n[0])\n'
  const result = spawnSync('python3', ['-c', script, tty], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`FIONREAD on ${tty} failed: ${result.stderr}`)
  return Number(result.stdout)
}

/** The printer's side on the pty pair's `b` end, through node-serialport's own binding. */
export async function serialPeer(
  pair: PtyPair,
): Promise<TransportPeer & { sink: ByteSink; close(): Promise<void> }> {
  const sink = new ByteSink()
  const port = new SerialPort({ path: pair.b, baudRate: 115200, autoOpen: false })
  port.on('error', () => {}) // the line hangs up when socat is stopped
  port.on('data', (chunk: Buffer) => sink.push(chunk))
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())))
  const close = async () => {
    if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()))
  }
  return {
    sink,
    waitForBytes: (count) => sink.waitFor(count),
    send: (bytes) =>
      new Promise<void>((resolve, reject) => {
        port.write(bytes)
        port.drain((e) => (e ? reject(e) : resolve()))
      }),
    goAway: async () => {
      await pair.stop()
      await close()
    },
    close,
  }
}

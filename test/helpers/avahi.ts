import { execFile } from 'node:child_process'
import { readlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { type PeerProcess, startPeer, waitUntilReady } from './peer-process.ts'
import { tempDir } from './temp-dir.ts'

/**
 * Two machines on a LAN of their own, each with a real avahi-daemon (Debian avahi-daemon): `hub` and `till`.
 * mDNS does not run on `lo` (no MULTICAST flag), so each machine is a network namespace the test makes
 * (`unshare --net`, held by a `sleep` and gone when it ends), joined by a veth pair; no packet leaves them.
 * Each has its own mount namespace with an empty /run and /etc/avahi/services, so its daemon neither sees nor
 * replaces the host's pid file and socket, and its own private D-Bus system bus, so the host's system bus and any
 * avahi-daemon already running are never touched. Clients (an advertiser, avahi-browse) need no namespace: they
 * reach a daemon through its bus's socket file. Needs root.
 */
export interface AvahiLan {
  hub: AvahiHost
  till: AvahiHost
  /** Ends every process it started (its namespaces go with them) and removes its directory. */
  stop(): Promise<void>
}

export interface AvahiHost {
  /** `<hostName>.local` is its mDNS host name. */
  hostName: string
  /** Its IPv4 address on the LAN. */
  address: string
  /** DBUS_SYSTEM_BUS_ADDRESS of its private system bus, where its avahi-daemon is. */
  busAddress: string
  /** The pid of its avahi-daemon, while one runs. */
  daemonPid(): number | undefined
  stopDaemon(): Promise<void>
  /** Starts its avahi-daemon again; resolves once the daemon has started up. */
  startDaemon(): Promise<void>
  /** The services of `type` its avahi-daemon knows now, resolved (`avahi-browse --resolve --terminate`). */
  browse(type: string): Promise<BrowsedService[]>
}

export interface BrowsedService {
  name: string
  type: string
  hostName: string
  address: string
  port: number
  txt: Record<string, string>
}

const run = promisify(execFile)
const BROWSE_TIMEOUT_MS = 15_000
const DAEMON_START_TIMEOUT_MS = 15_000

function busConfig(socketPath: string): string {
  return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=${socketPath}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="org.freedesktop.Avahi"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`
}

function daemonConfig(hostName: string, iface: string): string {
  return [
    '[server]',
    `host-name=${hostName}`,
    'use-ipv4=yes',
    'use-ipv6=no',
    `allow-interfaces=${iface}`,
    'enable-dbus=yes',
    '[wide-area]',
    'enable-wide-area=no',
    '[publish]',
    'publish-hinfo=no',
    'publish-workstation=no',
    '[reflector]',
    'enable-reflector=no',
    '',
  ].join('\n')
}

/** A process in new network and mount namespaces, which live as long as it does. */
async function namespaceHolder(): Promise<PeerProcess> {
  const holder = startPeer('unshare', ['--net', '--mount', '--', 'sleep', 'infinity'])
  const ownNet = readlinkSync('/proc/self/ns/net')
  await waitUntilReady(holder, 'unshare', async () => {
    try {
      return readlinkSync(`/proc/${holder.child.pid}/ns/net`) !== ownNet
    } catch {
      return false
    }
  })
  return holder
}

function inNamespaces(holder: PeerProcess, command: string[]): Promise<unknown> {
  const pid = holder.child.pid
  return run('nsenter', [`--net=/proc/${pid}/ns/net`, `--mount=/proc/${pid}/ns/mnt`, '--', ...command])
}

export async function startAvahiLan(): Promise<AvahiLan> {
  const dir = tempDir('print-hub-avahi-')
  const peers: PeerProcess[] = []
  const daemons = new Map<string, PeerProcess>()
  const stop = async () => {
    for (const daemon of daemons.values()) await daemon.stop()
    for (const peer of peers.reverse()) await peer.stop()
    dir.remove()
  }
  try {
    const machines = [
      { hostName: 'print-hub-test-hub', iface: 'hub0', address: '169.254.77.1' },
      { hostName: 'print-hub-test-till', iface: 'till0', address: '169.254.77.2' },
    ]
    const holders: PeerProcess[] = []
    for (const _ of machines) {
      const holder = await namespaceHolder()
      peers.push(holder)
      holders.push(holder)
    }
    const [hubHolder, tillHolder] = holders as [PeerProcess, PeerProcess]
    // One cable between the two machines: made in the hub's namespace, its other end put in the till's.
    await inNamespaces(hubHolder, [
      ...['ip', 'link', 'add', 'hub0', 'type', 'veth'],
      ...['peer', 'name', 'till0', 'netns', String(tillHolder.child.pid)],
    ])

    const hosts: AvahiHost[] = []
    for (const [index, machine] of machines.entries()) {
      const holder = holders[index]!
      await inNamespaces(holder, ['ip', 'address', 'add', `${machine.address}/24`, 'dev', machine.iface])
      await inNamespaces(holder, ['ip', 'link', 'set', machine.iface, 'up'])
      await inNamespaces(holder, ['mount', '-t', 'tmpfs', 'tmpfs', '/run'])
      await inNamespaces(holder, ['mount', '-t', 'tmpfs', 'tmpfs', '/etc/avahi/services'])

      const busSocket = path.join(dir.path, `${machine.hostName}.bus`)
      const busConfigFile = path.join(dir.path, `${machine.hostName}.bus.conf`)
      writeFileSync(busConfigFile, busConfig(busSocket))
      const bus = startPeer('dbus-daemon', [`--config-file=${busConfigFile}`, '--nofork', '--print-address'])
      peers.push(bus)
      await waitUntilReady(bus, 'dbus-daemon', async () => bus.output().includes('unix:path='))
      const busAddress = `unix:path=${busSocket}`

      const daemonConfigFile = path.join(dir.path, `${machine.hostName}.avahi.conf`)
      writeFileSync(daemonConfigFile, daemonConfig(machine.hostName, machine.iface))
      const startDaemon = async () => {
        const pid = holder.child.pid
        const daemon = startPeer(
          'nsenter',
          [
            ...[`--net=/proc/${pid}/ns/net`, `--mount=/proc/${pid}/ns/mnt`, '--'],
            ...['avahi-daemon', '--no-drop-root', '--no-chroot', '--no-rlimits', '--no-proc-title'],
            ...['--file', daemonConfigFile],
          ],
          { env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: busAddress } },
        )
        daemons.set(machine.hostName, daemon)
        await waitUntilReady(
          daemon,
          'avahi-daemon',
          async () => daemon.output().includes('Server startup complete'),
          DAEMON_START_TIMEOUT_MS,
        )
      }
      await startDaemon()
      hosts.push({
        hostName: machine.hostName,
        address: machine.address,
        busAddress,
        daemonPid: () => {
          const daemon = daemons.get(machine.hostName)
          return daemon && !daemon.exited() ? daemon.child.pid : undefined
        },
        stopDaemon: async () => {
          await daemons.get(machine.hostName)?.stop()
          daemons.delete(machine.hostName)
        },
        startDaemon,
        browse: (type) => browse(busAddress, type),
      })
    }
    return { hub: hosts[0]!, till: hosts[1]!, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

async function browse(busAddress: string, type: string): Promise<BrowsedService[]> {
  const { stdout } = await run('avahi-browse', ['--resolve', '--parsable', '--terminate', type], {
    env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: busAddress },
    timeout: BROWSE_TIMEOUT_MS,
  })
  const services = new Map<string, BrowsedService>()
  for (const line of stdout.split('\n')) {
    // =;interface;protocol;name;type;domain;host name;address;port;"txt" "txt"
    if (!line.startsWith('=;')) continue
    const fields = line.split(';')
    const service: BrowsedService = {
      name: unescapeLabel(fields[3]!),
      type: fields[4]!,
      hostName: fields[6]!,
      address: fields[7]!,
      port: Number(fields[8]),
      txt: parseTxt(fields.slice(9).join(';')),
    }
    services.set(service.name, service)
  }
  return [...services.values()]
}

/** avahi-browse writes a name's bytes `\DDD` (decimal) or `\c`. */
function unescapeLabel(escaped: string): string {
  const bytes: number[] = []
  for (let i = 0; i < escaped.length; i++) {
    if (escaped[i] === '\\' && /^\d{3}$/.test(escaped.slice(i + 1, i + 4))) {
      bytes.push(Number(escaped.slice(i + 1, i + 4)))
      i += 3
    } else if (escaped[i] === '\\' && i + 1 < escaped.length) {
      bytes.push(...Buffer.from(escaped[++i]!))
    } else {
      bytes.push(...Buffer.from(escaped[i]!))
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

/** `"key=value" "key=value"`, as avahi-browse writes a TXT record. */
function parseTxt(field: string): Record<string, string> {
  const txt: Record<string, string> = {}
  for (const match of field.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    const text = match[1]!.replace(/\\(.)/g, '$1')
    const equals = text.indexOf('=')
    if (equals === -1) txt[text] = ''
    else txt[text.slice(0, equals)] = text.slice(equals + 1)
  }
  return txt
}

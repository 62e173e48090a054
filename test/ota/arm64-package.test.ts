import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { elfTarget, TARGETS } from '../../ota/architectures.ts'
import { ApiClient } from '../e2e/api-client.ts'
import {
  type CloudProcess,
  FAST_HUB_ENV,
  newTempDir,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from '../e2e/harness.ts'
import { runCli, waitForLogLine } from '../helpers/cli.ts'
import { available, type BootedRoot, bootRoot, debianRoot } from '../helpers/debian-root.ts'
import { makePdf } from '../helpers/pdf.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { otaBuild } from './ota-build.ts'

// The arm64 package on ARM without ARM hardware: `ota build --arch arm64` here, then a Debian 12 arm64
// minbase root (debootstrap, cached in OTA_CACHE_DIR/roots) booted as a throwaway overlay, every arm64 binary
// in it run by qemu-user-static through binfmt_misc. apt installs the package with its dependencies from
// Debian; the hub is started with its systemd unit's command line, against a cloud on the host's loopback.
//
// Measured on a 2-core x86-64 machine shared with other work (load about 4): the whole file 80 s with the
// caches warm, 3 min 40 s cold. ota build 10 s (78 s cold: the addons cross-compiled); debootstrap 77-87 s
// once; apt-get install of the package and the 60 packages it adds 40-60 s, all of it dpkg emulated, whether
// the .debs are downloaded or cached; "hub ready" 3.7 s after the start, the printer online 0.3 s later; the
// RAW job 0.3 s, the PDF job 1.8 s (the render worker's start and Ghostscript emulated).

const VERSION = '1.6.0'
const MIRROR = 'http://deb.debian.org/debian'
const DEB = `print-hub_${VERSION}_arm64.deb`
const UNIT = '/lib/systemd/system/print-hub.service'
const SETTINGS = '/etc/default/print-hub'
const support = available('arm64')
if (!support.ok) console.warn(`test/ota/arm64-package.test.ts skipped: ${support.reason}`)

/** The [Service] section of a unit file: each setting's values, in order. */
function serviceSettings(unit: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  let section = ''
  for (const raw of unit.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    if (line.startsWith('[')) {
      section = line
      continue
    }
    const eq = line.indexOf('=')
    if (section !== '[Service]' || eq < 0) continue
    const key = line.slice(0, eq).trim()
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1).trim()])
  }
  return settings
}

/** An EnvironmentFile= (systemd.exec(5)): KEY=VALUE lines, # and ; comments, a value in quotes unquoted. */
function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const eq = line.indexOf('=')
    if (eq < 0) continue
    let value = line.slice(eq + 1).trim()
    const quoted = /^"((?:[^"\\]|\\.)*)"$|^'([^']*)'$/.exec(value)
    if (quoted) value = quoted[1]?.replace(/\\(.)/g, '$1') ?? quoted[2] ?? ''
    env[line.slice(0, eq).trim()] = value
  }
  return env
}

/**
 * A command line of ExecStart= as systemd makes it (systemd.service(5), "Command lines"): words split at
 * white space, quotes removed; `${VAR}` replaced within its word, a word `$VAR` by the value's own words.
 */
function commandLine(line: string, env: Record<string, string>): string[] {
  const words: { text: string; quoted: boolean }[] = []
  let i = 0
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++
    if (i >= line.length) break
    let text = ''
    let quoted = false
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t') {
      const c = line[i]!
      if (c === '"' || c === "'") {
        const end = line.indexOf(c, i + 1)
        text += line.slice(i + 1, end)
        quoted = true
        i = end + 1
      } else {
        text += c
        i++
      }
    }
    words.push({ text, quoted })
  }
  return words.flatMap(({ text, quoted }) => {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(text)
    if (whole && !quoted) return (env[whole[1]!] ?? '').split(/\s+/).filter(Boolean)
    return [text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? '')]
  })
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

describe.skipIf(!support.ok)('the arm64 package in a Debian 12 arm64 root under qemu-user-static', () => {
  let booted: BootedRoot
  let install: { stdout: string }
  let cloud: CloudProcess
  let api: ApiClient
  let receipt: PrinterSimulator
  let enrollmentToken: string
  let hub: ChildProcess
  let printerId: string
  const timings: Record<string, string> = {}

  beforeAll(async () => {
    const work = await newTempDir('arm64-package-')
    const outDir = path.join(work, 'out')
    const keygen = runCli('ota/cli.ts', ['keygen', '--out', path.join(work, 'keys')], {})
    const keyFile = (JSON.parse(keygen.stdout) as { private_key_file: string }).private_key_file
    let t0 = Date.now()
    const build = await otaBuild(VERSION, outDir, keyFile, ['arm64'])
    timings['ota build --arch arm64'] = seconds(Date.now() - t0)
    expect(build.stderr).toBe('')
    expect(build.status).toBe(0)

    t0 = Date.now()
    const root = await debianRoot({ suite: 'bookworm', arch: 'arm64', mirror: MIRROR })
    timings['Debian root'] = root.builtMs === null ? 'cached' : `debootstrap ${seconds(root.builtMs)}`
    booted = await bootRoot(root)
    timings.boot = `${booted.bootMs} ms`
    booted.writeFile(`/tmp/${DEB}`, readFileSync(path.join(outDir, DEB)))
    t0 = Date.now()
    install = await booted.aptInstall([`/tmp/${DEB}`])
    timings['apt-get install'] = seconds(Date.now() - t0)

    cloud = await startCloudProcess()
    const account = await setUpAccount(cloud, 'Arm64 shop')
    api = new ApiClient(cloud.url, account.accessToken)
    enrollmentToken = account.enrollmentToken
    receipt = await startPrinterSimulator({ language: 'escpos', name: 'Receipt' })
  }, 900_000)

  afterAll(async () => {
    await booted?.close()
    await stopAll()
    await receipt?.close()
    console.info(`arm64 package under emulation: ${JSON.stringify(timings, null, 1)}`)
  }, 60_000)

  it('apt-get installs it, its dependencies resolved from Debian for arm64', async () => {
    const added = /^The following NEW packages will be installed:\n((?: .*\n)+)/m.exec(install.stdout)?.[1]
    // libudev1 is in minbase already.
    expect(added?.split(/\s+/).filter(Boolean)).toEqual(
      expect.arrayContaining(['print-hub', 'ghostscript', 'libgs10']),
    )
    expect(install.stdout).toContain(`Setting up print-hub (${VERSION}) ...`)
    const query = await booted.run('dpkg-query', [
      '--show',
      `--showformat=\${Package} \${Status} \${Version} \${Architecture}\\n`,
      'print-hub',
      'ghostscript',
      'libgs10',
      'libudev1',
    ])
    const installed = Object.fromEntries(
      query.stdout
        .trim()
        .split('\n')
        .map((line) => [line.split(' ')[0], line.split(' ').slice(1)]),
    )
    expect(installed['print-hub']).toEqual(['install', 'ok', 'installed', VERSION, 'arm64'])
    for (const name of ['ghostscript', 'libgs10', 'libudev1']) {
      expect(installed[name]?.slice(0, 3), name).toEqual(['install', 'ok', 'installed'])
      expect(installed[name]?.[4], name).toBe('arm64')
      // The installed version (***) is the one Debian's archive has for arm64.
      const policy = (await booted.run('apt-cache', ['policy', name])).stdout
      expect(policy, name).toContain(
        ` *** ${installed[name]?.[3]} 500\n        500 ${MIRROR} bookworm/main arm64 Packages\n`,
      )
    }
  })

  it('carries an aarch64 Node.js that runs there: the build machine’s version', async () => {
    const node = '/opt/print-hub/current/runtime/bin/node'
    expect(elfTarget(booted.readFile(node).subarray(0, 20))).toEqual({
      machine: TARGETS.arm64.elfMachine,
      elfClass: 64,
    })
    const ran = await booted.run(node, ['-p', "process.arch + ' ' + process.version"])
    expect(ran.stdout).toBe(`arm64 ${process.version}\n`)
  })

  it('postinst made the print-hub user (in lp and dialout) and enabled the unit', async () => {
    const id = await booted.run('id', ['--name', '--groups', 'print-hub'])
    expect(id.stdout.trim().split(' ').sort()).toEqual(['dialout', 'lp', 'print-hub'])
    const wanted = await booted.run('readlink', [
      '/etc/systemd/system/multi-user.target.wants/print-hub.service',
    ])
    expect(wanted.stdout).toBe(`${UNIT}\n`)
    const state = await booted.run('stat', ['--format=%U %G %a', '/var/lib/print-hub'])
    expect(state.stdout).toBe('print-hub print-hub 700\n')
  })

  it('the hub, started by its unit’s command line as its user, enrols and brings its printer online', async () => {
    booted.writeFile(
      SETTINGS,
      [
        `PRINT_HUB_CLOUD=${cloud.url}`,
        `PRINT_HUB_OPTIONS=--enroll ${enrollmentToken} --printer ${receipt.uri}`,
        ...Object.entries(FAST_HUB_ENV).map(([key, value]) => `${key}=${value}`),
        '',
      ].join('\n'),
    )
    const service = serviceSettings(booted.readFile(UNIT).toString('utf8'))
    expect(service.get('EnvironmentFile')).toEqual([`-${SETTINGS}`])
    const env: Record<string, string> = {
      ...Object.fromEntries(service.get('Environment')!.map((e) => e.split('=', 2) as [string, string])),
      ...environmentFile(booted.readFile(SETTINGS).toString('utf8')),
    }
    const user = service.get('User')![0]!
    const group = service.get('Group')![0]!
    const own = (await booted.run('id', ['--name', '--groups', user])).stdout.trim().split(' ')
    const groups = [...new Set([...own, ...service.get('SupplementaryGroups')![0]!.split(' ')])]
    const as = { user, group, groups, env: { ...env, USER: user, LOGNAME: user } }
    const cwd = service.get('WorkingDirectory')![0]!

    const condition = commandLine(service.get('ExecCondition')![0]!, env)
    expect(condition).toEqual(['/bin/sh', '-c', 'test -n "$PRINT_HUB_CLOUD"'])
    expect((await booted.run(condition[0]!, condition.slice(1), { ...as, cwd, check: false })).status).toBe(0)
    const argv = commandLine(service.get('ExecStart')![0]!, env)
    expect(argv).toEqual([
      '/opt/print-hub/bin/print-hub',
      'run',
      '--cloud',
      cloud.url,
      '--data',
      '/var/lib/print-hub',
      '--enroll',
      enrollmentToken,
      '--printer',
      receipt.uri,
    ])

    const t0 = Date.now()
    hub = booted.spawn(argv[0]!, argv.slice(1), { ...as, cwd })
    const output: string[] = []
    hub.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')))
    hub.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')))
    await waitForLogLine(hub, (line) => line.msg === 'hub ready').catch((error: Error) => {
      throw new Error(`${error.message}\n${output.join('')}`)
    })
    timings['hub ready'] = seconds(Date.now() - t0)
    const printers = await api.waitForPrinters(1, 120_000)
    timings['printer online'] = seconds(Date.now() - t0)
    expect(printers.map((p) => p.name)).toEqual(['Receipt'])
    printerId = printers[0]!.printer_id

    // The launcher exec'd the carried runtime, which qemu (binfmt_misc's P flag: argv[0] kept) runs.
    const cmdline = readFileSync(`/proc/${hub.pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
    expect(cmdline.slice(1)).toEqual([
      '/opt/print-hub/current/runtime/bin/node',
      '/opt/print-hub/current/runtime/bin/node',
      '--max-semi-space-size=1',
      '--optimize-for-size',
      '--single-threaded',
      '/opt/print-hub/current/lib/hub.mjs',
      ...argv.slice(1),
    ])
    const status = readFileSync(`/proc/${hub.pid}/status`, 'utf8')
    const uid = (await booted.run('id', ['--user', user])).stdout.trim()
    expect(/^Uid:\t(\d+)\t/m.exec(status)?.[1]).toBe(uid)
    await expect
      .poll(async () => {
        const agents = await api.request<{ data: { version: string | null }[] }>('GET', '/api/v1/agents')
        return agents.body.data.map((a) => a.version)
      })
      .toEqual([VERSION])
  }, 300_000)

  it('prints a RAW ESC/POS job byte for byte', async () => {
    receipt.clear()
    const bytes = Buffer.concat([
      Buffer.from([0x1b, 0x40]),
      Buffer.from('Arm64 hub\n2 x Croissant   4.80\n', 'latin1'),
      Buffer.from([0x1d, 0x76, 0x30, 0x00, 0x02, 0x00, 0x02, 0x00, 0xff, 0x10, 0x04, 0x00]),
      Buffer.from([0x1d, 0x56, 0x42, 0x00]),
    ])
    const t0 = Date.now()
    const job = await api.printRaw(printerId, bytes, 'escpos')
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], 120_000)
    timings['RAW job'] = seconds(Date.now() - t0)
    expect(done).toMatchObject({ status: 'printed', failure_reason: null })
    expect(receipt.received().toString('hex')).toBe(bytes.toString('hex'))
  }, 180_000)

  it('prints a PDF as the same raster an amd64 hub sends for it', async () => {
    const amd64Receipt = await startPrinterSimulator({ language: 'escpos', name: 'Receipt' })
    try {
      const amd64Account = await setUpAccount(cloud, 'Amd64 shop')
      const amd64Api = new ApiClient(cloud.url, amd64Account.accessToken)
      await startHubProcess({
        cloudUrl: cloud.url,
        enroll: amd64Account.enrollmentToken,
        printers: [amd64Receipt.uri],
      })
      const amd64Printer = (await amd64Api.waitForPrinters(1))[0]!.printer_id
      const pdf = makePdf(1, 'Arm64 hub')

      const reference = await amd64Api.printPdf(amd64Printer, pdf)
      expect(await amd64Api.waitForJob(reference.print_job_id, ['printed', 'failed'], 60_000)).toMatchObject({
        status: 'printed',
      })
      receipt.clear()
      const t0 = Date.now()
      const job = await api.printPdf(printerId, pdf)
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], 240_000)
      timings['PDF job'] = seconds(Date.now() - t0)
      expect(done).toMatchObject({ status: 'printed', failure_reason: null })
      const raster = amd64Receipt.received()
      expect(raster.includes(Buffer.from([0x1d, 0x76, 0x30]))).toBe(true)
      expect(receipt.received().length).toBe(raster.length)
      expect(receipt.received().equals(raster)).toBe(true)
    } finally {
      await amd64Receipt.close()
    }
  }, 300_000)

  it('stops on SIGTERM, and close() leaves no process nor mount behind', async () => {
    const t0 = Date.now()
    const exited = new Promise<number | null>((resolve) => hub.once('exit', (code) => resolve(code)))
    hub.kill('SIGTERM')
    expect(await exited).toBe(0)
    timings['hub stop'] = seconds(Date.now() - t0)
    await booted.close()
    expect(booted.processes()).toEqual([])
    expect(existsSync(booted.dir)).toBe(false)
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(path.dirname(booted.dir))
  }, 120_000)
})

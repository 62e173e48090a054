import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { elfTarget, TARGETS } from '../../ota/architectures.ts'
import {
  MANIFEST,
  type ReleaseManifest,
  sha256File,
  INSTALL_ROOT as TARBALL_ROOT,
  tarballArguments,
} from '../../ota/build.ts'
import { writeReleaseKey } from '../../ota/release-key.ts'
import type { Agent } from '../../protocol/agent.ts'
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
import { runCli } from '../helpers/cli.ts'
import { available, type BootedRoot, bootRoot, debianRoot, type RunResult } from '../helpers/debian-root.ts'
import { makePdf } from '../helpers/pdf.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { otaBuild } from './ota-build.ts'
import { type Supervised, supervise } from './supervisor.ts'
import { commandLine, environmentFile, serviceSettings } from './systemd-unit.ts'

// The ARM packages on ARM without ARM hardware: `ota build --arch arm64,armhf` here, then for each a Debian 12
// minbase root of that architecture (debootstrap, cached in OTA_CACHE_DIR/roots) booted as a throwaway
// overlay, every ARM binary in it run by qemu-user-static through binfmt_misc. apt installs release A's
// package with its dependencies from Debian; the hub runs with its systemd unit's command line under a
// supervisor that restarts it as the unit says, against a cloud on the host's loopback; it prints, then
// updates itself to release B and rolls back from a broken release C.
//
// Measured on a 2-core x86-64 machine shared with other work (load about 3): the whole file 4-4.5 min with
// the caches warm, 8 min cold. Each ota build of both architectures 11-24 s (129 s cold: the addons
// cross-compiled); debootstrap 65-76 s an architecture, once; apt-get install 41-82 s an architecture, dpkg
// emulated. On each architecture: "hub ready" 3-4 s after the start, a RAW job 0.2 s, the PDF job 2 s; from
// the pin to B confirmed 6-10 s (the tarball downloaded, hashed and unpacked under emulation), from the
// pin to B back after C failed 8-12 s.

const A = '1.6.0'
const B = '1.7.0'
const C = '1.8.0'
const ARCHES = ['arm64', 'armhf'] as const
type ArmArch = (typeof ARCHES)[number]
const MIRROR = 'http://deb.debian.org/debian'
const UNIT = '/lib/systemd/system/print-hub.service'
const SETTINGS = '/etc/default/print-hub'
/** Counted from the switch; under emulation a release takes 4-10 s to connect. */
const TRIAL_MS = 60_000
const support = Object.fromEntries(ARCHES.map((arch) => [arch, available(arch)])) as Record<
  ArmArch,
  ReturnType<typeof available>
>
const offered = ARCHES.filter((arch) => support[arch].ok)
for (const arch of ARCHES) {
  const s = support[arch]
  if (!s.ok) console.warn(`test/ota/arm-package.test.ts: ${arch} skipped: ${s.reason}`)
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const tarballOf = (version: string, arch: ArmArch) => `print-hub_${version}_linux-${arch}.tar.gz`
/** The cloud CLI takes a second or two per call: polls of it get room for several. */
const CLI_POLL = { timeout: 60_000, interval: 500 }
/** An ESC/POS receipt whose bytes name the phase it was printed in; a raster image in it. */
const escpos = (label: string) =>
  Buffer.concat([
    Buffer.from([0x1b, 0x40]),
    Buffer.from(`${label}\n2 x Croissant   4.80\n`, 'latin1'),
    Buffer.from([0x1d, 0x76, 0x30, 0x00, 0x02, 0x00, 0x02, 0x00, 0xff, 0x10, 0x04, 0x00]),
    Buffer.from([0x1d, 0x56, 0x42, 0x00]),
  ])
const PDF = makePdf(1, 'ARM hub')

let work: string
let keyFile: string
let cloud: CloudProcess
const INSTALL_ROOT = '/opt/print-hub'
const fileTimings: Record<string, string> = {}
const builds = new Map<string, Promise<string>>()
const publishes = new Map<string, Promise<void>>()
let amd64Raster: Promise<Buffer> | undefined

/** `ota build` of `version` for every ARM architecture offered here, once for the file: its OUT. */
function built(version: string): Promise<string> {
  let out = builds.get(version)
  if (!out) {
    out = (async () => {
      const dir = path.join(work, `out-${version}`)
      const t0 = Date.now()
      const build = await otaBuild(version, dir, keyFile, offered)
      fileTimings[`ota build ${version} --arch ${offered.join(',')}`] = seconds(Date.now() - t0)
      if (build.status !== 0 || build.stderr !== '')
        throw new Error(`ota build ${version}: exit ${build.status}\n${build.stderr}`)
      return dir
    })()
    builds.set(version, out)
  }
  return out
}

/**
 * Release `version` made from release `from`'s tarballs to fail at once when started, without a build of its
 * own: releases/FROM renamed releases/VERSION (its release.json saying so, `current` pointing there) and its
 * lib/hub.mjs replaced by a script that says so and exits 1, repacked as `ota build` packs a tarball, with a
 * release.json of its own for `ota publish`, so that the release is published, signed and verified like any
 * other. Only the tarballs: a hub updates itself from those.
 */
async function brokenRelease(from: string, version: string): Promise<string> {
  const fromDir = await built(from)
  const outDir = path.join(work, `out-${version}`)
  mkdirSync(outDir)
  const fromManifest = JSON.parse(readFileSync(path.join(fromDir, MANIFEST), 'utf8')) as ReleaseManifest
  const manifest: ReleaseManifest = { ...fromManifest, version, installers: [] }
  for (const arch of offered) {
    const stage = mkdtempSync(path.join(work, `broken-${arch}-`))
    execFileSync('tar', [
      '--extract',
      '--gzip',
      '--file',
      path.join(fromDir, tarballOf(from, arch)),
      '--directory',
      stage,
    ])
    const releases = path.join(stage, TARBALL_ROOT, 'releases')
    renameSync(path.join(releases, from), path.join(releases, version))
    const releaseJson = path.join(releases, version, MANIFEST)
    writeFileSync(
      releaseJson,
      readFileSync(releaseJson, 'utf8').replace(`"version": "${from}"`, `"version": "${version}"`),
    )
    expect(JSON.parse(readFileSync(releaseJson, 'utf8')).version).toBe(version)
    const current = path.join(stage, TARBALL_ROOT, 'current')
    rmSync(current)
    symlinkSync(`releases/${version}`, current)
    const bundle = path.join(releases, version, 'lib/hub.mjs')
    expect(statSync(bundle).size).toBeGreaterThan(100_000)
    writeFileSync(
      bundle,
      `process.stderr.write('release ${version}: broken on purpose\\n')\nprocess.exit(1)\n`,
    )
    const file = path.join(outDir, tarballOf(version, arch))
    execFileSync('tar', tarballArguments(file, stage))
    rmSync(stage, { recursive: true, force: true })
    const installer = fromManifest.installers.find((i) => i.filename === tarballOf(from, arch))!
    manifest.installers.push({
      ...installer,
      filename: tarballOf(version, arch),
      size_bytes: statSync(file).size,
      sha256: await sha256File(file),
    })
  }
  writeFileSync(path.join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
  return outDir
}

/** `ota publish` of `version` to the cloud, once for the file (C made broken from B). */
function published(version: string): Promise<void> {
  let done = publishes.get(version)
  if (!done) {
    done = (async () => {
      const t0 = Date.now()
      const out = version === C ? await brokenRelease(B, C) : await built(version)
      if (version === C) fileTimings[`${C} from ${B}, broken`] = seconds(Date.now() - t0)
      const publish = runCli(
        'ota/cli.ts',
        ['publish', '--from', out, '--without-boot-test', 'no card image is made in this test'],
        {
          DATA_DIR: cloud.dataDir,
          OTA_SIGNING_KEY: keyFile,
        },
      )
      if (publish.status !== 0 || publish.stderr !== '')
        throw new Error(`ota publish ${version}: exit ${publish.status}\n${publish.stderr}`)
    })()
    publishes.set(version, done)
  }
  return done
}

/** What an amd64 hub, run from the checkout, sends a receipt printer for PDF: once for the file. */
function amd64RasterOf(): Promise<Buffer> {
  amd64Raster ??= (async () => {
    const printer = await startPrinterSimulator({ language: 'escpos', name: 'Receipt' })
    try {
      const account = await setUpAccount(cloud, 'Amd64 shop')
      const api = new ApiClient(cloud.url, account.accessToken)
      await startHubProcess({ cloudUrl: cloud.url, enroll: account.enrollmentToken, printers: [printer.uri] })
      const printerId = (await api.waitForPrinters(1))[0]!.printer_id
      const job = await api.printPdf(printerId, PDF)
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], 60_000)
      if (done.status !== 'printed') throw new Error(`the amd64 hub's PDF job: ${JSON.stringify(done)}`)
      return printer.received()
    } finally {
      await printer.close()
    }
  })()
  return amd64Raster
}

describe.skipIf(offered.length === 0)('the ARM packages in Debian 12 roots under qemu-user-static', () => {
  beforeAll(async () => {
    work = await newTempDir('arm-package-')
    keyFile = writeReleaseKey(path.join(work, 'keys')).private_key_file
    cloud = await startCloudProcess()
  }, 120_000)

  afterAll(async () => {
    await stopAll()
    console.info(`ARM packages, builds: ${JSON.stringify(fileTimings, null, 1)}`)
  }, 60_000)

  describe.each(offered)('%s', (arch) => {
    const target = TARGETS[arch]
    const deb = `print-hub_${A}_${arch}.deb`
    let booted: BootedRoot
    let install: RunResult
    let api: ApiClient
    let accountId: string
    let enrollmentToken: string
    let receipt: PrinterSimulator
    let hub: Supervised
    let agentId: string
    let printerId: string
    const timings: Record<string, string> = {}

    const current = () =>
      readFileSync(booted.hostPath(path.join(INSTALL_ROOT, 'current/release.json')), 'utf8')
    const currentLink = async () =>
      (await booted.run('readlink', [path.join(INSTALL_ROOT, 'current')])).stdout.trim()
    /** The releases whose Node.js the hub's process runs: the files qemu mapped for it. */
    const runningReleases = () => {
      const prefix = `${booted.dir}${INSTALL_ROOT}/releases/`
      const files = readFileSync(`/proc/${hub.current().pid}/maps`, 'utf8')
        .split('\n')
        .map((line) => line.split(/\s+/).slice(5).join(' '))
        .filter((file) => file.startsWith(prefix) && file.endsWith('/runtime/bin/node'))
      return [...new Set(files.map((file) => file.slice(prefix.length).split('/')[0]))]
    }
    const agentVersion = async () =>
      (await api.request<{ data: Agent[] }>('GET', '/api/v1/agents')).body.data.map((a) => a.version)
    const releaseStatus = async () =>
      (await cloud.admin(['release', 'status', '--hub', agentId])) as Record<string, unknown>

    /** `promise`, or an error with the hub's recent output once `ms` have passed. */
    async function within<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const lines = hub
            .lines()
            .slice(-15)
            .map((l) => `${l.run}: ${JSON.stringify(l.line)}`)
          reject(
            new Error(
              `${what}: not within ${seconds(ms)}; exits ${JSON.stringify(hub.exits())}\n${lines.join('\n')}\n${hub.stderr().slice(-3000)}`,
            ),
          )
        }, ms)
      })
      try {
        return await Promise.race([promise, timeout])
      } finally {
        clearTimeout(timer)
      }
    }

    async function prints(label: string) {
      receipt.clear()
      const bytes = escpos(label)
      const t0 = Date.now()
      const job = await api.printRaw(printerId, bytes, 'escpos')
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], 120_000)
      timings[`RAW job (${label})`] = seconds(Date.now() - t0)
      expect(done).toMatchObject({ status: 'printed', failure_reason: null })
      expect(receipt.received().toString('hex')).toBe(bytes.toString('hex'))
    }

    beforeAll(async () => {
      const out = await built(A)
      await published(A)
      let t0 = Date.now()
      const root = await debianRoot({ suite: 'bookworm', arch, mirror: MIRROR })
      timings['Debian root'] = root.builtMs === null ? 'cached' : `debootstrap ${seconds(root.builtMs)}`
      booted = await bootRoot(root)
      timings.boot = `${booted.bootMs} ms`
      booted.writeFile(`/tmp/${deb}`, readFileSync(path.join(out, deb)))
      t0 = Date.now()
      install = await booted.aptInstall([`/tmp/${deb}`])
      timings['apt-get install'] = seconds(Date.now() - t0)

      const account = await setUpAccount(cloud, `${arch} shop`)
      accountId = account.accountId
      enrollmentToken = account.enrollmentToken
      api = new ApiClient(cloud.url, account.accessToken)
      // The account's hubs run A until a test pins its hub to another release.
      await cloud.admin(['release', 'pin', '--account', accountId, '--version', A])
      receipt = await startPrinterSimulator({ language: 'escpos', name: 'Receipt' })
    }, 900_000)

    afterAll(async () => {
      await hub?.stop()
      await booted?.close()
      await receipt?.close()
      console.info(`the ${arch} package under emulation: ${JSON.stringify(timings, null, 1)}`)
    }, 60_000)

    it(`apt-get installs it, its dependencies resolved from Debian for ${arch}`, async () => {
      const added = /^The following NEW packages will be installed:\n((?: .*\n)+)/m.exec(install.stdout)?.[1]
      const needed = ['ghostscript', 'libgs10', ...target.runtimeDepends]
      // libudev1 is in minbase already.
      expect(added?.split(/\s+/).filter(Boolean)).toEqual(expect.arrayContaining(['print-hub', ...needed]))
      expect(install.stdout).toContain(`Setting up print-hub (${A}) ...`)
      const query = await booted.run('dpkg-query', [
        '--show',
        `--showformat=\${Package} \${Status} \${Version} \${Architecture}\\n`,
        'print-hub',
        ...needed,
        'libudev1',
      ])
      const installed = Object.fromEntries(
        query.stdout
          .trim()
          .split('\n')
          .map((line) => [line.split(' ')[0], line.split(' ').slice(1)]),
      )
      expect(installed['print-hub']).toEqual(['install', 'ok', 'installed', A, arch])
      for (const name of [...needed, 'libudev1']) {
        expect(installed[name]?.slice(0, 3), name).toEqual(['install', 'ok', 'installed'])
        expect(installed[name]?.[4], name).toBe(arch)
        // The installed version (***) is the one Debian's archive has for this architecture.
        const policy = (await booted.run('apt-cache', ['policy', name])).stdout
        expect(policy, name).toContain(
          ` *** ${installed[name]?.[3]} 500\n        500 ${MIRROR} bookworm/main ${arch} Packages\n`,
        )
      }
    })

    it('carries a Node.js for it that runs there', async () => {
      const node = path.join(INSTALL_ROOT, 'current/runtime/bin/node')
      expect(elfTarget(booted.readFile(node).subarray(0, 20))).toEqual({
        machine: target.elfMachine,
        elfClass: target.elfClass,
      })
      const ran = await booted.run(node, ['-p', "process.arch + ' ' + process.version"])
      expect(ran.stdout).toBe(`${target.node} v${target.runtimeVersion(process.versions.node)}\n`)
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
      expect(await currentLink()).toBe(`releases/${A}`)
    })

    it('the hub, run by its unit’s command line as its user and restarted as the unit says, enrols and brings its printer online', async () => {
      booted.writeFile(
        SETTINGS,
        [
          `PRINT_HUB_CLOUD=${cloud.url}`,
          `PRINT_HUB_OPTIONS=--enroll ${enrollmentToken} --printer ${receipt.uri}`,
          ...Object.entries({ ...FAST_HUB_ENV, HUB_UPDATE_TRIAL_MS: String(TRIAL_MS) }).map(
            ([key, value]) => `${key}=${value}`,
          ),
          '',
        ].join('\n'),
      )
      const service = serviceSettings(booted.readFile(UNIT).toString('utf8'))
      expect(service.get('EnvironmentFile')).toEqual([`-${SETTINGS}`])
      // What the supervisor does (test/ota/supervisor.ts): restart unless the exit is 0 or 2, exit 3 included.
      expect(service.get('Restart')).toEqual(['on-failure'])
      expect(service.get('SuccessExitStatus')).toEqual(['3'])
      expect(service.get('RestartForceExitStatus')).toEqual(['3'])
      expect(service.get('RestartPreventExitStatus')).toEqual(['2'])
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
      expect((await booted.run(condition[0]!, condition.slice(1), { ...as, cwd, check: false })).status).toBe(
        0,
      )
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
      hub = supervise(argv[0]!, argv.slice(1), {
        spawn: (command, args) => booted.spawn(command, args, { ...as, cwd }),
      })
      const ready = await within(
        'hub ready',
        hub.waitForLine((line) => line.msg === 'hub ready'),
        120_000,
      )
      timings['hub ready'] = seconds(Date.now() - t0)
      agentId = String(ready.line.agent_id)
      const printers = await api.waitForPrinters(1, 120_000)
      timings['printer online'] = seconds(Date.now() - t0)
      expect(printers.map((p) => p.name)).toEqual(['Receipt'])
      printerId = printers[0]!.printer_id

      // The launcher exec'd the carried runtime, which qemu (binfmt_misc's P flag: argv[0] kept) runs.
      const pid = hub.current().pid!
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
      expect(cmdline.slice(1)).toEqual([
        '/opt/print-hub/current/runtime/bin/node',
        '/opt/print-hub/current/runtime/bin/node',
        '--max-semi-space-size=1',
        '--optimize-for-size',
        '--single-threaded',
        '--liftoff-only',
        '/opt/print-hub/current/lib/hub.mjs',
        ...argv.slice(1),
      ])
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const uid = (await booted.run('id', ['--user', user])).stdout.trim()
      expect(/^Uid:\t(\d+)\t/m.exec(status)?.[1]).toBe(uid)
      expect(runningReleases()).toEqual([A])
      await expect.poll(agentVersion, { timeout: 20_000 }).toEqual([A])
      expect(hub.runs()).toBe(1)
    }, 300_000)

    it('prints a RAW ESC/POS job byte for byte', async () => {
      await prints(`${arch} hub on ${A}`)
    }, 180_000)

    it('prints a PDF as the same raster an amd64 hub sends for it', async () => {
      const raster = await amd64RasterOf()
      expect(raster.includes(Buffer.from([0x1d, 0x76, 0x30]))).toBe(true)
      receipt.clear()
      const t0 = Date.now()
      const job = await api.printPdf(printerId, PDF)
      const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], 240_000)
      timings['PDF job'] = seconds(Date.now() - t0)
      expect(done).toMatchObject({ status: 'printed', failure_reason: null })
      expect(receipt.received().length).toBe(raster.length)
      expect(receipt.received().equals(raster)).toBe(true)
    }, 300_000)

    it('updates itself to release B, which prints', async () => {
      await published(B)
      const t0 = Date.now()
      await cloud.admin(['release', 'pin', '--hub', agentId, '--version', B])
      expect(await within('the switch to B', hub.waitForExit(1), 240_000)).toBe(3)
      timings['pin B → A exits 3'] = seconds(Date.now() - t0)
      await within(
        'B confirmed',
        hub.waitForLine((line, run) => run === 2 && line.msg === 'release confirmed'),
        120_000,
      )
      timings['pin B → B confirmed'] = seconds(Date.now() - t0)

      expect(hub.runs()).toBe(2)
      expect(await currentLink()).toBe(`releases/${B}`)
      expect(JSON.parse(current())).toMatchObject({ version: B, architecture: arch })
      // Releases other than the new and the previous one are deleted on confirmation.
      expect(readdirSync(booted.hostPath(path.join(INSTALL_ROOT, 'releases'))).sort()).toEqual([A, B])
      expect(runningReleases()).toEqual([B])
      await expect.poll(agentVersion, CLI_POLL).toEqual([B])
      await expect.poll(releaseStatus, CLI_POLL).toMatchObject({
        version: B,
        release: B,
        release_source: 'hub_pin',
        update: { version: B, status: 'succeeded' },
      })
      await prints(`${arch} hub on ${B}`)
      expect(hub.exits()).toEqual([3])
    }, 600_000)

    it('switches to a broken release C, rolls back to B by itself, and prints on B', async () => {
      await published(C)
      const t0 = Date.now()
      await cloud.admin(['release', 'pin', '--hub', agentId, '--version', C])
      expect(await within('the switch to C', hub.waitForExit(2), 240_000)).toBe(3)
      timings['pin C → B exits 3'] = seconds(Date.now() - t0)
      await within('C started', hub.waitForStderr(`release ${C}: broken on purpose\n`), 60_000)
      expect(await within('C failed', hub.waitForExit(3), 60_000)).toBe(1)
      await within(
        'the rollback',
        hub.waitForStderr(`print-hub: release ${C} did not come up; rolled back to ${B}\n`),
        60_000,
      )
      await within(
        'B back',
        hub.waitForLine((line, run) => run === 4 && line.msg === 'hub ready'),
        120_000,
      )
      timings['pin C → B back'] = seconds(Date.now() - t0)

      expect(await currentLink()).toBe(`releases/${B}`)
      expect(JSON.parse(current())).toMatchObject({ version: B, architecture: arch })
      expect(existsSync(booted.hostPath(path.join(INSTALL_ROOT, 'update/trial')))).toBe(false)
      expect(runningReleases()).toEqual([B])
      await expect.poll(releaseStatus, CLI_POLL).toMatchObject({
        version: B,
        release: C,
        release_source: 'hub_pin',
        update: {
          version: C,
          status: 'failed',
          failure: 'rolled_back',
          detail: `it stopped before it connected to the cloud; rolled back to ${B}`,
          at: expect.any(String),
        },
      })
      expect(await agentVersion()).toEqual([B])
      await prints(`${arch} hub back on ${B}`)
      // C is not offered to this hub again.
      expect(hub.runs()).toBe(4)
      expect(hub.exits()).toEqual([3, 3, 1])
      expect(await currentLink()).toBe(`releases/${B}`)
    }, 600_000)

    it('stops on SIGTERM, and close() leaves no process nor mount behind', async () => {
      const t0 = Date.now()
      await hub.stop()
      expect(hub.exits()).toEqual([3, 3, 1, 0])
      timings['hub stop'] = seconds(Date.now() - t0)
      const sleeper = booted.spawn('/bin/sleep', ['600'])
      await expect.poll(() => booted.processes()).toContain(sleeper.pid)
      await booted.close()
      await expect.poll(() => existsSync(`/proc/${sleeper.pid}`)).toBe(false)
      expect(existsSync(booted.dir)).toBe(false)
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(path.dirname(booted.dir))
    }, 120_000)
  })
})

import { type ChildProcess, execFileSync } from 'node:child_process'
import { createHash, createPublicKey, verify } from 'node:crypto'
import { readFileSync, readlinkSync, statSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../../ota/catalog.ts'
import { writeReleaseKey } from '../../ota/release-key.ts'
import { ApiClient } from '../e2e/api-client.ts'
import { type CloudProcess, newTempDir, setUpAccount, startCloudProcess, stopAll } from '../e2e/harness.ts'
import { exitOf, hasExited, runCli } from '../helpers/cli.ts'
import { makePdf } from '../helpers/pdf.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { otaBuild } from './ota-build.ts'
import { startUnpackedHub } from './unpacked-hub.ts'

// `ota build` once for this whole file (about 25 s here; the Node.js runtime package is fetched once into
// OTA_CACHE_DIR, ~/.cache/print-hub-ota by default), then: the package inspected with dpkg-deb, unpacked
// into a scratch root, and its hub started from the built JavaScript with the runtime it carries, against a
// real cloud, printing a RAW job and a PDF job (the built render worker); the release published to that
// cloud and checked with the key that ships in the package.

const VERSION = '1.4.2'
const ARCH = process.arch === 'arm64' ? 'arm64' : 'amd64'
const DEB = `print-hub_${VERSION}_${ARCH}.deb`
const TARBALL = `print-hub_${VERSION}_linux-${ARCH}.tar.gz`
/** The release's directory in the package (docs/hub-updates.md); /opt/print-hub/current points at it. */
const RELEASE = `opt/print-hub/releases/${VERSION}`
const BUILD_TIMEOUT_MS = 300_000

let outDir: string
let scratch: string
let keyFile: string
let buildMs: number
let built: { version: string; installers: { filename: string; sha256: string; size_bytes: number }[] }

const dpkgDeb = (...args: string[]) =>
  execFileSync('dpkg-deb', args, { encoding: 'utf8', maxBuffer: 1 << 26 })
/** Paths of an archive listing (`./opt/...` or `opt/...`), without the leading `./` and trailing `/`. */
const pathsOf = (listing: string[]) =>
  listing
    .map((p) =>
      p
        .replace(/^\.\//, '')
        .replace(/\/$/, '')
        .replace(/ -> .*$/, ''),
    )
    .filter(Boolean)

beforeAll(async () => {
  const work = await newTempDir('ota-package-')
  outDir = path.join(work, 'out')
  scratch = path.join(work, 'root')
  keyFile = writeReleaseKey(path.join(work, 'keys')).private_key_file
  const t0 = Date.now()
  const build = await otaBuild(VERSION, outDir, keyFile)
  buildMs = Date.now() - t0
  expect(build.stderr).toBe('')
  expect(build.status).toBe(0)
  built = JSON.parse(build.stdout)
  dpkgDeb('-x', path.join(outDir, DEB), scratch)
}, BUILD_TIMEOUT_MS)
afterAll(async () => {
  await stopAll()
})

describe('ota build', () => {
  it('prints the version and each installer with its SHA-256 and size', () => {
    expect(built.version).toBe(VERSION)
    expect(built.installers.map((i) => i.filename)).toEqual([DEB, TARBALL])
    for (const installer of built.installers) {
      const file = path.join(outDir, installer.filename)
      expect(installer.size_bytes).toBe(statSync(file).size)
      expect(installer.sha256).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'))
    }
    console.info(`ota build: ${(buildMs / 1000).toFixed(1)} s`)
  })
})

describe('the Debian package', () => {
  it('dpkg-deb --info: its control fields, dependencies and maintainer scripts', () => {
    const info = dpkgDeb('--info', path.join(outDir, DEB))
    expect(info).toMatch(/^ Package: print-hub$/m)
    expect(info).toMatch(new RegExp(`^ Version: ${VERSION.replaceAll('.', '\\.')}$`, 'm'))
    expect(info).toMatch(new RegExp(`^ Architecture: ${ARCH}$`, 'm'))
    const depends = /^ Depends: (.*)$/m.exec(info)?.[1]?.split(', ')
    expect(depends).toEqual(expect.arrayContaining(['ghostscript', 'libgs10', 'libudev1', 'adduser']))
    // The runtime is carried, not a dependency (Debian 12's nodejs is 18).
    expect(depends?.some((d) => d.startsWith('nodejs'))).toBe(false)
    // DNS-SD for the LAN print API: recommended, since the hub works without it.
    expect(info).toMatch(/^ Recommends: avahi-daemon, avahi-utils$/m)
    for (const script of ['postinst', 'prerm', 'postrm'])
      expect(info).toMatch(new RegExp(` ${script} .*#!/bin/sh`))
    expect(info).toContain(' conffiles')
    const control = execFileSync(
      'sh',
      ['-c', `dpkg-deb --ctrl-tarfile "$1" | tar -tvf -`, 'sh', path.join(outDir, DEB)],
      {
        encoding: 'utf8',
      },
    )
    for (const script of ['postinst', 'prerm', 'postrm'])
      expect(control).toMatch(new RegExp(`^-rwxr-xr-x root/root .* \\./${script}$`, 'm'))
  })

  it('dpkg-deb --contents: exactly the expected files outside node_modules, owned by root', () => {
    const listing = dpkgDeb('--contents', path.join(outDir, DEB)).trim().split('\n')
    for (const line of listing) expect(line, line).toMatch(/^[-dl][-rwx]{9} root\/root /)
    // Shared objects are not executable (Debian policy §8.1): the addons are 0644.
    for (const line of listing.filter((l) => l.endsWith('.node'))) expect(line, line).toMatch(/^-rw-r--r-- /)
    const paths = pathsOf(listing.map((line) => line.split(/\s+/).slice(5).join(' ')))
    // dpkg-deb writes symlinks after the other files: compared in name order.
    expect(paths.filter((p) => !p.startsWith(`${RELEASE}/node_modules/`)).sort()).toEqual(
      [
        'etc',
        'etc/default',
        'etc/default/print-hub',
        'lib',
        'lib/systemd',
        'lib/systemd/system',
        'lib/systemd/system/print-hub.service',
        'lib/udev',
        'lib/udev/rules.d',
        'lib/udev/rules.d/60-print-hub.rules',
        'opt',
        'opt/print-hub',
        'opt/print-hub/bin',
        'opt/print-hub/bin/print-hub',
        'opt/print-hub/current',
        'opt/print-hub/releases',
        RELEASE,
        `${RELEASE}/lib`,
        `${RELEASE}/lib/hub.mjs`,
        `${RELEASE}/lib/hub.mjs.LEGAL.txt`,
        `${RELEASE}/lib/render-worker-process.mjs`,
        `${RELEASE}/node_modules`,
        `${RELEASE}/release.json`,
        `${RELEASE}/runtime`,
        `${RELEASE}/runtime/LICENSE`,
        `${RELEASE}/runtime/bin`,
        `${RELEASE}/runtime/bin/node`,
        `${RELEASE}/share`,
        `${RELEASE}/share/release-key.pem`,
        'usr',
        'usr/bin',
        'usr/bin/print-hub',
        'usr/share',
        'usr/share/doc',
        'usr/share/doc/print-hub',
        'usr/share/doc/print-hub/changelog.gz',
        'usr/share/doc/print-hub/copyright',
        'usr/share/lintian',
        'usr/share/lintian/overrides',
        'usr/share/lintian/overrides/print-hub',
        'usr/share/man',
        'usr/share/man/man8',
        'usr/share/man/man8/print-hub.8.gz',
      ].sort(),
    )
    // `current` is a relative symlink to the release, so that a self-update can flip it (rename over it).
    expect(listing.find((line) => / \.\/opt\/print-hub\/current -> /.test(line))).toMatch(
      new RegExp(`^l.* ./opt/print-hub/current -> releases/${VERSION.replaceAll('.', '\\.')}$`),
    )
    const modules = paths.filter((p) => p.startsWith(`${RELEASE}/node_modules/`))
    // The native addons, compiled for this architecture by ota build, and no other binary: no prebuilds of the
    // npm packages (for this platform or another) and nothing left from building.
    const addons = modules.filter((p) => p.endsWith('.node'))
    expect(addons.sort()).toEqual(
      [
        `${RELEASE}/node_modules/better-sqlite3/build/Release/better_sqlite3.node`,
        `${RELEASE}/node_modules/ghostscript4js/build/Release/ghostscript4js.node`,
        `${RELEASE}/node_modules/usb/build/Release/usb_bindings.node`,
        `${RELEASE}/node_modules/@serialport/bindings-cpp/build/Release/bindings.node`,
      ].sort(),
    )
    expect(modules.filter((p) => p.includes('/prebuilds'))).toEqual([])
    expect(modules.filter((p) => /\.(cc|cpp|c|h|o|a)$|\/obj(\.target)?\//.test(p))).toEqual([])
    expect(modules.some((p) => p.includes('node_modules/tsx/') || p.includes('node_modules/esbuild/'))).toBe(
      false,
    )
  })

  it('the unit: restart on failure, hardening, state directory, settings file, the print-hub user', () => {
    const unit = readFileSync(path.join(scratch, 'lib/systemd/system/print-hub.service'), 'utf8')
    for (const line of [
      'User=print-hub',
      'SupplementaryGroups=lp dialout',
      'EnvironmentFile=-/etc/default/print-hub',
      // systemd's ${VAR} (one word) and $VAR (split on white space), not a template.
      `ExecStart=/opt/print-hub/bin/print-hub run --cloud \${PRINT_HUB_CLOUD} --data /var/lib/print-hub $PRINT_HUB_OPTIONS`,
      'Restart=on-failure',
      'RestartPreventExitStatus=2',
      'SuccessExitStatus=3',
      'RestartForceExitStatus=3',
      'StateDirectory=print-hub',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ReadWritePaths=/opt/print-hub',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'WantedBy=multi-user.target',
    ])
      expect(unit.split('\n'), line).toContain(line)
    const rules = readFileSync(path.join(scratch, 'lib/udev/rules.d/60-print-hub.rules'), 'utf8')
    expect(rules).toContain('SUBSYSTEM=="usbmisc", KERNEL=="lp[0-9]*", GROUP="lp", MODE="0660"')
    expect(rules).toContain('ENV{ID_USB_INTERFACES}=="*:07????:*", GROUP="lp"')
  })

  it('the maintainer scripts: the user in lp and dialout; purge alone deletes /var/lib/print-hub', () => {
    const dir = path.join(scratch, '..', 'control')
    dpkgDeb('-e', path.join(outDir, DEB), dir)
    const postinst = readFileSync(path.join(dir, 'postinst'), 'utf8')
    expect(postinst).toContain('adduser --system --group --home /var/lib/print-hub')
    expect(postinst).toContain('for group in lp dialout')
    // The service as debhelper's dh_installsystemd would handle it: enabled, started, restarted on upgrade.
    expect(postinst).toContain("deb-systemd-helper enable 'print-hub.service'")
    expect(postinst).toContain('deb-systemd-invoke $_dh_action')
    const prerm = readFileSync(path.join(dir, 'prerm'), 'utf8')
    expect(prerm).toContain("deb-systemd-invoke stop 'print-hub.service'")
    const postrm = readFileSync(path.join(dir, 'postrm'), 'utf8')
    expect(postrm).toContain("deb-systemd-helper purge 'print-hub.service'")
    const purge = postrm.slice(postrm.indexOf('purge)'))
    expect(purge).toContain('rm -rf /var/lib/print-hub')
    expect(postrm.slice(0, postrm.indexOf('purge)'))).not.toContain('/var/lib/print-hub\n')
    expect(prerm).not.toContain('rm ')
    for (const script of ['postinst', 'prerm', 'postrm']) {
      expect(statSync(path.join(dir, script)).mode & 0o777, script).toBe(0o755)
      execFileSync('sh', ['-n', path.join(dir, script)])
    }
    expect(readFileSync(path.join(dir, 'conffiles'), 'utf8')).toBe('/etc/default/print-hub\n')
    // dpkg --verify checks every installed file but the conffiles against DEBIAN/md5sums.
    const md5sums = readFileSync(path.join(dir, 'md5sums'), 'utf8')
    expect(md5sums).toMatch(new RegExp(`^[0-9a-f]{32}  ${RELEASE}/runtime/bin/node$`, 'm'))
    expect(md5sums).not.toContain('etc/default/print-hub')
  })

  it('the tarball holds the same tree', () => {
    const deb = pathsOf(
      dpkgDeb('--contents', path.join(outDir, DEB))
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/).slice(5).join(' ')),
    )
    const tar = pathsOf(
      execFileSync('tar', ['-tzf', path.join(outDir, TARBALL)], { encoding: 'utf8', maxBuffer: 1 << 26 })
        .trim()
        .split('\n'),
    )
    expect([...tar].sort()).toEqual(deb.filter((p) => p !== '').sort())
  })
})

describe('the packaged hub, unpacked and run from its built JavaScript', () => {
  let cloud: CloudProcess
  let api: ApiClient
  let receipt: PrinterSimulator
  let hub: ChildProcess
  let printerId: string

  beforeAll(async () => {
    cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    receipt = await startPrinterSimulator({ language: 'escpos' })
    const dataDir = await newTempDir('packaged-hub-')
    hub = await startUnpackedHub(scratch, {
      cloudUrl: cloud.url,
      dataDir,
      enroll: account.enrollmentToken,
      printer: `${receipt.uri}&name=Packaged`,
    })
    printerId = (await api.waitForPrinters(1))[0]!.printer_id
  }, 60_000)
  afterAll(async () => {
    if (hub && !hasExited(hub)) {
      hub.kill('SIGTERM')
      await exitOf(hub)
    }
    await receipt?.close()
  })

  it('runs the carried runtime on the bundle, with no tsx, and reports the release version', async () => {
    const cmdline = readFileSync(`/proc/${hub.pid}/cmdline`, 'utf8').split('\0')
    // The launcher execs the release `current` points at.
    expect(cmdline[0]).toBe(path.join(scratch, 'opt/print-hub/current/runtime/bin/node'))
    // With the V8 flags that keep its idle memory down (packaging/print-hub.sh).
    expect(cmdline.slice(1, 6)).toEqual([
      '--max-semi-space-size=1',
      '--optimize-for-size',
      '--single-threaded',
      '--liftoff-only',
      path.join(scratch, 'opt/print-hub/current/lib/hub.mjs'),
    ])
    expect(readlinkSync(`/proc/${hub.pid}/exe`)).toBe(path.join(scratch, RELEASE, 'runtime/bin/node'))
    expect(cmdline.join(' ')).not.toContain('tsx')
    await expect
      .poll(async () => {
        const agents = await api.request<{ data: { version: string | null }[] }>('GET', '/api/v1/agents')
        return agents.body.data.map((a) => a.version)
      })
      .toEqual([VERSION])
  })

  it('prints a RAW job', async () => {
    receipt.clear()
    const bytes = Buffer.from('\x1b@Packaged hub\n\x1dVB\x00', 'latin1')
    const job = await api.printRaw(printerId, bytes, 'escpos')
    expect((await api.waitForJob(job.print_job_id, ['printed', 'failed'])).status).toBe('printed')
    expect(receipt.received().includes(bytes)).toBe(true)
  })

  it('prints a PDF job through the built render worker (ESC/POS raster, GS v 0)', async () => {
    receipt.clear()
    const job = await api.printPdf(printerId, makePdf(1, 'Packaged'))
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'], 30_000)
    expect(done, JSON.stringify(done)).toMatchObject({ status: 'printed' })
    expect(receipt.received().includes(Buffer.from([0x1d, 0x76, 0x30]))).toBe(true)
  })

  it('published to the cloud, its catalog verifies with the key in the package and serves the .deb byte for byte', async () => {
    const publish = runCli('ota/cli.ts', ['publish', '--from', outDir, '--notes', 'Packaged'], {
      DATA_DIR: cloud.dataDir,
      OTA_SIGNING_KEY: keyFile,
    })
    expect(publish.stderr).toBe('')
    const res = await fetch(`${cloud.url}/agent-download-api/v1/releases`)
    const body = Buffer.from(await res.arrayBuffer())
    const packagedKey = createPublicKey(readFileSync(path.join(scratch, RELEASE, 'share/release-key.pem')))
    const signature = Buffer.from(res.headers.get('x-catalog-signature') ?? '', 'base64')
    expect(verify(null, body, packagedKey, signature)).toBe(true)
    const catalog = JSON.parse(body.toString('utf8')) as Catalog
    const deb = catalog.current.installers.find((i) => i.filename === DEB)!
    expect(deb).toMatchObject(built.installers[0]!)
    const download = await fetch(`${cloud.url}/agent-download-api/v1/installers/${DEB}`)
    const bytes = Buffer.from(await download.arrayBuffer())
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(deb.sha256)
    expect(bytes.equals(readFileSync(path.join(outDir, DEB)))).toBe(true)
  })
})

import { execFileSync } from 'node:child_process'
import { closeSync, copyFileSync, lstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tarballOf } from '../../hub/update/release-download.ts'
import { type Architecture, elfTarget, TARGETS } from '../../ota/architectures.ts'
import { CATALOG_FILE, parseSignedCatalog, RELEASES_DIR } from '../../ota/catalog.ts'
import { writeReleaseKey } from '../../ota/release-key.ts'
import { cacheDir, nodeRuntime } from '../../ota/runtime.ts'
import { ApiClient } from '../e2e/api-client.ts'
import { newTempDir, setUpAccount, startCloudProcess, stopAll } from '../e2e/harness.ts'
import { exitOf, runCli } from '../helpers/cli.ts'
import { makePdf } from '../helpers/pdf.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { otaBuild } from './ota-build.ts'
import { startUnpackedHub } from './unpacked-hub.ts'

// `ota build --arch arm64,armhf` on this x86-64 machine, once for the file: the native addons cross-compiled
// with Debian's toolchains against each carried runtime's headers (about 1 min an architecture the first time,
// then from the cache), each package checked file by file for binaries of its own architecture only.
// test/ota/arm-package.test.ts runs the arm64 and armhf packages on ARM under emulation.

const VERSION = '1.5.0'
const CROSS: Architecture[] = ['arm64', 'armhf']
const BUILD_TIMEOUT_MS = 600_000
const RELEASE = `opt/print-hub/releases/${VERSION}`

let work: string
let outDir: string
let keyFile: string
let printed: { installers: { filename: string; architecture: string }[] }

const readelf = (...args: string[]) => execFileSync('readelf', args, { encoding: 'utf8' })

/** Every regular file of a tree whose first bytes are an ELF header. */
function elfFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const file = path.join(d, entry)
      const stat = lstatSync(file)
      if (stat.isDirectory()) walk(file)
      else if (stat.isFile() && stat.size >= 20) {
        const fd = openSync(file, 'r')
        const header = Buffer.alloc(20)
        readSync(fd, header, 0, 20, 0)
        closeSync(fd)
        if (elfTarget(header)) out.push(file)
      }
    }
  }
  walk(dir)
  return out.sort()
}

beforeAll(async () => {
  work = await newTempDir('ota-cross-')
  outDir = path.join(work, 'out')
  keyFile = writeReleaseKey(path.join(work, 'keys')).private_key_file
  const build = await otaBuild(VERSION, outDir, keyFile, CROSS)
  expect(build.stderr).toBe('')
  expect(build.status).toBe(0)
  printed = JSON.parse(build.stdout)
}, BUILD_TIMEOUT_MS)
afterAll(async () => {
  await stopAll()
})

describe('ota build --arch on an x86-64 machine', () => {
  it('prints and lists in release.json a .deb and a tarball of each architecture asked', () => {
    const names = CROSS.flatMap((a) => [
      `print-hub_${VERSION}_${a}.deb`,
      `print-hub_${VERSION}_linux-${a}.tar.gz`,
    ])
    expect(printed.installers.map((i) => [i.filename, i.architecture])).toEqual(
      names.map((n) => [n, n.includes('arm64') ? 'arm64' : 'armhf']),
    )
    const manifest = JSON.parse(readFileSync(path.join(outDir, 'release.json'), 'utf8'))
    expect(manifest.installers.map((i: { filename: string }) => i.filename)).toEqual(names)
    expect(manifest.node_versions).toEqual({ arm64: process.version.slice(1), armhf: '20.11.0' })
  })

  for (const arch of CROSS) {
    describe(`the ${arch} package`, () => {
      let root: string
      beforeAll(async () => {
        root = path.join(work, `root-${arch}`)
        execFileSync('dpkg-deb', ['-x', path.join(outDir, `print-hub_${VERSION}_${arch}.deb`), root])
      })

      it('says its architecture, and its release.json the Node.js it carries', () => {
        const deb = path.join(outDir, `print-hub_${VERSION}_${arch}.deb`)
        expect(execFileSync('dpkg-deb', ['--field', deb, 'Architecture'], { encoding: 'utf8' }).trim()).toBe(
          arch,
        )
        const release = JSON.parse(readFileSync(path.join(root, RELEASE, 'release.json'), 'utf8'))
        expect(release).toMatchObject({
          version: VERSION,
          architecture: arch,
          node_version: TARGETS[arch].runtimeVersion(process.version.slice(1)),
        })
      })

      it('holds exactly the runtime and the four addons as binaries, all for its architecture, stripped', () => {
        const target = TARGETS[arch]
        const files = elfFiles(root)
        expect(files.map((f) => path.relative(path.join(root, RELEASE), f))).toEqual(
          [
            'node_modules/@serialport/bindings-cpp/build/Release/bindings.node',
            'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
            'node_modules/ghostscript4js/build/Release/ghostscript4js.node',
            'node_modules/usb/build/Release/usb_bindings.node',
            'runtime/bin/node',
          ].sort(),
        )
        for (const file of files) {
          const header = readelf('--file-header', file)
          expect(header, file).toContain(`Class:                             ELF${target.elfClass}`)
          expect(header, file).toContain(
            { amd64: 'Advanced Micro Devices X86-64', arm64: 'AArch64', armhf: 'ARM' }[arch],
          )
          // No symbol table and no debugging sections (Debian policy §10.1).
          const sections = readelf('--section-headers', '--wide', file)
          expect(sections, file).not.toMatch(/\] \.symtab |\] \.debug_/)
        }
        if (arch === 'armhf')
          expect(readelf('--arch-specific', path.join(root, RELEASE, 'runtime/bin/node'))).toContain(
            'Tag_ABI_VFP_args: VFP registers',
          )
      })

      it('every shared library its binaries need comes from a package its Depends names', () => {
        // Which Debian 12 package ships each library these binaries name (dpkg -S on an installed system).
        const shippedBy: Record<string, string> = {
          'libc.so.6': 'libc6',
          'libm.so.6': 'libc6',
          'libdl.so.2': 'libc6',
          'libpthread.so.0': 'libc6',
          'ld-linux-aarch64.so.1': 'libc6',
          'ld-linux-armhf.so.3': 'libc6',
          'libstdc++.so.6': 'libstdc++6',
          'libgcc_s.so.1': 'libgcc-s1',
          'libatomic.so.1': 'libatomic1',
          'libgs.so.10': 'libgs10',
          'libudev.so.1': 'libudev1',
        }
        const depends = execFileSync(
          'dpkg-deb',
          ['--field', path.join(outDir, `print-hub_${VERSION}_${arch}.deb`), 'Depends'],
          { encoding: 'utf8' },
        )
          .trim()
          .split(', ')
          .map((d) => d.split(' ')[0])
        const needed = new Set<string>()
        for (const file of elfFiles(path.join(root, RELEASE)))
          for (const match of readelf('--dynamic', file).matchAll(
            /\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g,
          ))
            needed.add(match[1]!)
        expect([...needed].filter((lib) => !depends.includes(shippedBy[lib]))).toEqual([])
        // The 32-bit ARM runtime links libatomic (no native 64-bit atomics); the others do not need it.
        expect(needed.has('libatomic.so.1')).toBe(arch === 'armhf')
        expect(depends.includes('libatomic1')).toBe(arch === 'armhf')
      })
    })
  }

  it(
    'an amd64 build into the same directory adds its installers to release.json; publish takes all three',
    async () => {
      const build = await otaBuild(VERSION, outDir, keyFile, ['amd64'])
      expect(build.status, build.stderr).toBe(0)
      const manifest = JSON.parse(readFileSync(path.join(outDir, 'release.json'), 'utf8'))
      expect(manifest.installers.map((i: { architecture: string }) => i.architecture)).toEqual([
        'amd64',
        'amd64',
        'arm64',
        'arm64',
        'armhf',
        'armhf',
      ])
      expect(manifest.node_versions).toEqual({
        amd64: process.version.slice(1),
        arm64: process.version.slice(1),
        armhf: '20.11.0',
      })
      const dataDir = path.join(work, 'data')
      const publish = runCli(
        'ota/cli.ts',
        ['publish', '--from', outDir, '--without-boot-test', 'no card image is made in this test'],
        {
          DATA_DIR: dataDir,
          OTA_SIGNING_KEY: keyFile,
        },
      )
      expect(publish.stderr).toBe('')
      const stored = parseSignedCatalog(readFileSync(path.join(dataDir, RELEASES_DIR, CATALOG_FILE), 'utf8'))
      const catalog = JSON.parse(stored.text)
      expect(catalog.current.installers).toHaveLength(6)
      for (const arch of ['amd64', 'arm64', 'armhf'] as const)
        expect(tarballOf(catalog, VERSION, arch).filename).toBe(`print-hub_${VERSION}_linux-${arch}.tar.gz`)
    },
    BUILD_TIMEOUT_MS,
  )

  it('the hub bundle prints on Node.js 20.11.0, the runtime the armhf package carries (here its x64 build)', async () => {
    // The JavaScript is the same on every architecture; what 20.11 lacks of later 20.x it lacks on armhf too.
    // test/ota/arm-package.test.ts runs the armhf package on ARM itself.
    const root = path.join(work, 'root-amd64')
    execFileSync('dpkg-deb', ['-x', path.join(outDir, `print-hub_${VERSION}_amd64.deb`), root])
    const runtime = nodeRuntime(cacheDir(), {
      ...TARGETS.amd64,
      runtimeVersion: () => TARGETS.armhf.runtimeVersion(''),
    })
    const node = path.join(root, RELEASE, 'runtime/bin/node')
    copyFileSync(path.join(runtime.dir, 'bin/node'), node)
    expect(execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()).toBe('v20.11.0')

    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    const api = new ApiClient(cloud.url, account.accessToken)
    const receipt = await startPrinterSimulator({ language: 'escpos' })
    const dataDir = await newTempDir('hub-node-20.11-')
    const hub = await startUnpackedHub(root, {
      cloudUrl: cloud.url,
      dataDir,
      enroll: account.enrollmentToken,
      printer: receipt.uri,
    })
    try {
      const printerId = (await api.waitForPrinters(1))[0]!.printer_id
      const bytes = Buffer.from('\x1b@Node 20.11\n\x1dVB\x00', 'latin1')
      const raw = await api.printRaw(printerId, bytes, 'escpos')
      expect((await api.waitForJob(raw.print_job_id, ['printed', 'failed'])).status).toBe('printed')
      expect(receipt.received().equals(bytes)).toBe(true)
      receipt.clear()
      const pdf = await api.printPdf(printerId, makePdf(1, 'Node 20.11'))
      expect(await api.waitForJob(pdf.print_job_id, ['printed', 'failed'], 30_000)).toMatchObject({
        status: 'printed',
      })
      expect(receipt.received().includes(Buffer.from([0x1d, 0x76, 0x30]))).toBe(true)
    } finally {
      hub.kill('SIGTERM')
      await exitOf(hub)
      await receipt.close()
    }
  }, 120_000)

  it('--arch with an architecture it does not build is a usage error', () => {
    const result = runCli(
      'ota/cli.ts',
      ['build', '--version', VERSION, '--out', outDir, '--arch', 'arm64,i386'],
      {
        OTA_SIGNING_KEY: keyFile,
      },
    )
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('ota: --arch "i386": one of amd64, arm64, armhf')
  })
})

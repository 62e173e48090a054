import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { type ReleaseFacts, stageDebianDocs } from './debian-docs.ts'

/**
 * The Debian side of a hub package: where the unit, the udev rules and the settings go, the control file and
 * the maintainer scripts (packaging/), and `dpkg-deb`.
 */

/** Files from packaging/ and where they go in the installed system. */
export const SYSTEM_FILES = [
  { from: 'packaging/print-hub.service', to: 'lib/systemd/system/print-hub.service', mode: 0o644 },
  { from: 'packaging/60-print-hub.rules', to: 'lib/udev/rules.d/60-print-hub.rules', mode: 0o644 },
  { from: 'packaging/print-hub.default', to: 'etc/default/print-hub', mode: 0o644 },
] as const

export const MAINTAINER_SCRIPTS = ['postinst', 'prerm', 'postrm'] as const
export const CONFFILES = ['/etc/default/print-hub']

/**
 * What the package needs from the system. The Node.js runtime is carried (ota/runtime.ts), so not nodejs:
 * Debian 12's is 18. Ghostscript's library for the render worker (ghostscript4js links libgs.so.10) and the
 * `gs` program, libudev for the USB addon, the C++ runtime of the addons, adduser for the postinst; and what
 * the carried runtime of an architecture links beyond that (ota/architectures.ts, `runtimeDepends`).
 */
export const DEPENDS = [
  'adduser',
  'ghostscript',
  'libgs10',
  'libudev1',
  'libstdc++6',
  'libgcc-s1',
  'libc6 (>= 2.36)',
]

/** Copies the unit, the udev rules and the settings file into the staged root. */
export function stageSystemFiles(repoRoot: string, stage: string): void {
  for (const file of SYSTEM_FILES) {
    const target = path.join(stage, file.to)
    mkdirSync(path.dirname(target), { recursive: true })
    copyFileSync(path.join(repoRoot, file.from), target)
    chmodSync(target, file.mode)
  }
}

/** Writes DEBIAN/ (control, conffiles, maintainer scripts) into the staged root. */
export function stageControl(
  repoRoot: string,
  stage: string,
  fields: {
    version: string
    architecture: string
    installedSizeKb: number
    nodeVersion: string
    depends: readonly string[]
  },
): void {
  const debian = path.join(stage, 'DEBIAN')
  mkdirSync(debian, { recursive: true, mode: 0o755 })
  const control = [
    'Package: print-hub',
    `Version: ${fields.version}`,
    `Architecture: ${fields.architecture}`,
    'Maintainer: Print Hub releases <releases@print-hub.invalid>',
    `Installed-Size: ${fields.installedSizeKb}`,
    `Depends: ${fields.depends.join(', ')}`,
    // DNS-SD for the LAN print API (docs/lan-printing.md); the hub works without it.
    'Recommends: avahi-daemon, avahi-utils',
    'Section: misc',
    'Priority: optional',
    // At most 80 characters a line (Debian policy §5.6.13).
    'Description: print hub agent for receipt, label and office printers',
    ' Connects the receipt and label printers (USB, serial, network) and the IPP',
    ' printers of a site to the print cloud: it spools jobs on disk, renders PDFs',
    ' with Ghostscript and reports printer health.',
    ' .',
    ` It carries its own Node.js ${fields.nodeVersion} runtime in each release under`,
    ' /opt/print-hub/releases.',
    '',
  ].join('\n')
  writeFileSync(path.join(debian, 'control'), control)
  writeFileSync(path.join(debian, 'conffiles'), CONFFILES.map((f) => `${f}\n`).join(''))
  writeFileSync(path.join(debian, 'md5sums'), md5sums(stage))
  for (const script of MAINTAINER_SCRIPTS) {
    const target = path.join(debian, script)
    copyFileSync(path.join(repoRoot, 'packaging/debian', script), target)
    chmodSync(target, 0o755)
  }
}

/**
 * The Debian side of the complete staged tree: the documentation (ota/debian-docs.ts), then every file's
 * mode.
 */
export function stageDebianFiles(repoRoot: string, stage: string, release: ReleaseFacts): void {
  stageDebianDocs(repoRoot, stage, release)
  normalizeModes(stage)
}

/**
 * Directories 0755, programs 0755, other files 0644 (Debian policy §10.9), shared objects (the addons'
 * .node) not executable (§8.1); and no empty directories left where pruning node_modules emptied them.
 */
export function normalizeModes(dir: string): boolean {
  let empty = true
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name)
    const stat = lstatSync(file)
    if (stat.isSymbolicLink()) {
      empty = false
    } else if (stat.isDirectory()) {
      chmodSync(file, 0o755)
      if (normalizeModes(file) && file.includes('/node_modules/')) rmdirSync(file)
      else empty = false
    } else {
      empty = false
      const program = (stat.mode & 0o111) !== 0 && !/\.(node|so(\.\d+)*)$/.test(name)
      chmodSync(file, program ? 0o755 : 0o644)
    }
  }
  return empty
}

/** DEBIAN/md5sums: each file but the conffiles, as dh_md5sums writes it. */
function md5sums(stage: string): string {
  const lines: string[] = []
  const visit = (relative: string) => {
    for (const name of readdirSync(path.join(stage, relative)).sort()) {
      const file = relative ? `${relative}/${name}` : name
      if (file === 'DEBIAN') continue
      const stat = lstatSync(path.join(stage, file))
      if (stat.isDirectory()) visit(file)
      else if (stat.isFile() && !CONFFILES.includes(`/${file}`))
        lines.push(
          `${createHash('md5')
            .update(readFileSync(path.join(stage, file)))
            .digest('hex')}  ${file}\n`,
        )
    }
  }
  visit('')
  return lines.join('')
}

/** Size of the installed files in KiB (Debian policy §5.6.20), DEBIAN/ excluded. */
export function installedSizeKb(stage: string, dirs: string[]): number {
  const out = execFileSync('du', ['-sk', '--apparent-size', '-c', ...dirs.map((d) => path.join(stage, d))], {
    encoding: 'utf8',
  })
  const total = out.trim().split('\n').pop() ?? '0'
  return Number.parseInt(total, 10)
}

/**
 * `dpkg-deb --build`, files owned by root. xz at level 1 by default (OTA_DEB_COMPRESSION_LEVEL to change it: 6 saves 4 MB of 30 and takes 85 s instead of 12 s here);
 * the carried runtime is most of the package.
 */
export function buildDeb(stage: string, debFile: string, env: NodeJS.ProcessEnv = process.env): void {
  const level = env.OTA_DEB_COMPRESSION_LEVEL ?? '1'
  execFileSync('dpkg-deb', ['--root-owner-group', `-Zxz`, `-z${level}`, '--build', stage, debFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...env, SOURCE_DATE_EPOCH: env.SOURCE_DATE_EPOCH ?? String(Math.floor(Date.now() / 1000)) },
  })
}

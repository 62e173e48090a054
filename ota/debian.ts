import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

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

/**
 * What the package needs from the system. The Node.js runtime is carried (ota/runtime.ts), so not nodejs:
 * Debian 12's is 18. Ghostscript's library for the render worker (ghostscript4js links libgs.so.10) and the
 * `gs` program, libudev for the USB addon, the C++ runtime of the addons, adduser for the postinst.
 */
export const DEPENDS = 'adduser, ghostscript, libgs10, libudev1, libstdc++6, libgcc-s1, libc6 (>= 2.36)'

/** Node's `process.arch` → Debian's architecture name. */
export function debianArchitecture(arch: string = process.arch): 'amd64' | 'arm64' {
  if (arch === 'x64') return 'amd64'
  if (arch === 'arm64') return 'arm64'
  throw new Error(`hub packages are built for x64 and arm64, not ${arch}`)
}

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
  fields: { version: string; architecture: string; installedSizeKb: number; nodeVersion: string },
): void {
  const debian = path.join(stage, 'DEBIAN')
  mkdirSync(debian, { recursive: true, mode: 0o755 })
  const control = [
    'Package: print-hub',
    `Version: ${fields.version}`,
    `Architecture: ${fields.architecture}`,
    'Maintainer: Print Hub releases <releases@print-hub.invalid>',
    `Installed-Size: ${fields.installedSizeKb}`,
    `Depends: ${DEPENDS}`,
    'Section: misc',
    'Priority: optional',
    'Description: print hub agent for receipt, label and office printers',
    ' Connects the receipt and label printers (USB, serial, network) and IPP printers of a site to the',
    ' print cloud: it spools jobs on disk, renders PDFs with Ghostscript and reports printer health.',
    ` It carries its own Node.js ${fields.nodeVersion} runtime in each release under /opt/print-hub/releases.`,
    '',
  ].join('\n')
  writeFileSync(path.join(debian, 'control'), control)
  writeFileSync(path.join(debian, 'conffiles'), '/etc/default/print-hub\n')
  for (const script of MAINTAINER_SCRIPTS) {
    const target = path.join(debian, script)
    copyFileSync(path.join(repoRoot, 'packaging/debian', script), target)
    chmodSync(target, 0o755)
  }
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

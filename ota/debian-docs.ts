import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { debianCopyright } from './debian-copyright.ts'

/**
 * What Debian wants beside a package's files: the copyright file and the changelog (Debian policy §12.5,
 * §12.7), the manual page (§12.1) and the package's lintian overrides, from packaging/.
 */

export const DOC_DIR = 'usr/share/doc/print-hub'
export const MAN_PAGE = 'usr/share/man/man8/print-hub.8.gz'
export const LINTIAN_OVERRIDES = 'usr/share/lintian/overrides/print-hub'

export interface ReleaseFacts {
  version: string
  /** The staged release directory, opt/print-hub/releases/VERSION under the stage. */
  dir: string
  /** When it was built (ISO 8601): the date of a changelog entry written for it. */
  builtAt: string
  /** The directories of the npm packages compiled into its lib/*.mjs. */
  bundledPackages: readonly string[]
}

export function stageDebianDocs(repoRoot: string, stage: string, release: ReleaseFacts): void {
  const packaging = (file: string) => readFileSync(path.join(repoRoot, 'packaging', file), 'utf8')
  write(stage, `${DOC_DIR}/copyright`, debianCopyright(repoRoot, stage, release.dir, release.bundledPackages))
  write(stage, `${DOC_DIR}/changelog.gz`, gzip(changelogFor(packaging('changelog'), release)))
  write(stage, MAN_PAGE, gzip(packaging('print-hub.8')))
  write(stage, LINTIAN_OVERRIDES, packaging('lintian-overrides'))
}

const ENTRY_HEADER = /^print-hub \(([^)]+)\) /gm

/**
 * packaging/changelog from the built version's entry down. A version it has no entry for gets one on top,
 * signed as the latest entry is.
 */
export function changelogFor(changelog: string, release: Pick<ReleaseFacts, 'version' | 'builtAt'>): string {
  const entries = [...changelog.matchAll(ENTRY_HEADER)]
  const own = entries.find((m) => m[1] === release.version)
  if (own) return changelog.slice(own.index)
  const signer = /^ -- (.+?>) {2}/m.exec(changelog)?.[1]
  if (!signer) throw new Error('packaging/changelog has no signed entry')
  // RFC 5322 date, as dpkg-parsechangelog wants it (Debian policy §4.4).
  const date = new Date(release.builtAt).toUTCString().replace(/GMT$/, '+0000')
  return `print-hub (${release.version}) stable; urgency=medium\n\n  * Release ${release.version}.\n\n -- ${signer}  ${date}\n\n${changelog}`
}

/** gzip -9n: the best compression, no name or time stamp in the header (Debian policy §12.3). */
function gzip(text: string): Buffer {
  return gzipSync(text, { level: 9 })
}

function write(stage: string, file: string, contents: string | Buffer): void {
  const target = path.join(stage, file)
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 })
  writeFileSync(target, contents)
  chmodSync(target, 0o644)
}

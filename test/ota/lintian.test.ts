import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeReleaseKey } from '../../ota/release-key.ts'
import { ROOT } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { otaBuild } from './ota-build.ts'

// lintian (Debian 12's) on the package `ota build` makes for this machine's architecture: no error and no
// warning but what the overrides the package ships (packaging/lintian-overrides) cover, each with its reason.
// About 15 s to build and 15 s for lintian here.

const VERSION = '1.0.0'
const ARCH = process.arch === 'arm64' ? 'arm64' : process.arch === 'arm' ? 'armhf' : 'amd64'
const OVERRIDES = 'usr/share/lintian/overrides/print-hub'
const hasLintian = spawnSync('lintian', ['--version']).status === 0

/** Each override line's index, after checking that every line is an override, a comment or empty. */
function overrideLines(lines: string[]): number[] {
  for (const line of lines) expect(line).toMatch(/^(|# \S.*|print-hub: [a-z0-9.+-]+( .*)?)$/)
  return lines.flatMap((line, i) => (line.startsWith('print-hub: ') ? [i] : []))
}

/** A one-line reason: a comment right above the override, and nothing right above that comment. */
function expectReasons(overrides: string): void {
  const lines = overrides.split('\n')
  const indexes = overrideLines(lines)
  expect(indexes.length).toBeGreaterThan(0)
  for (const i of indexes) {
    expect(lines[i - 1], lines[i]).toMatch(/^# \S/)
    expect(lines[i - 2], lines[i]).toBe('')
  }
}

describe('packaging/lintian-overrides', () => {
  it('gives each override a one-line reason right above it', () => {
    expectReasons(readFileSync(path.join(ROOT, 'packaging/lintian-overrides'), 'utf8'))
  })
})

describe.skipIf(!hasLintian)('lintian on the package', () => {
  const work = tempDir('ota-lintian-')
  const deb = path.join(work.path, 'out', `print-hub_${VERSION}_${ARCH}.deb`)
  let output: string[]

  beforeAll(async () => {
    const keyFile = writeReleaseKey(path.join(work.path, 'keys')).private_key_file
    const build = await otaBuild(VERSION, path.join(work.path, 'out'), keyFile)
    expect(build.stderr).toBe('')
    expect(build.status).toBe(0)
    const t0 = Date.now()
    // --display-info for unused overrides; lintian exits 2 on an error, which the assertions below name.
    const lintian = spawnSync('lintian', ['--display-info', deb], { encoding: 'utf8', maxBuffer: 1 << 24 })
    console.info(`lintian: ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    output = lintian.stdout.split('\n').filter(Boolean)
  }, 300_000)
  afterAll(() => work.remove())

  it('prints no error and no warning', () => {
    expect(output.filter((line) => /^[EW]: /.test(line))).toEqual([])
  })

  it('uses every override the package ships, and each has its reason', () => {
    expect(output.filter((line) => /: (unused|mismatched)-override /.test(line))).toEqual([])
    const shipped = execFileSync(
      'sh',
      ['-c', `dpkg-deb --fsys-tarfile "$1" | tar -xOf - "./$2"`, 'sh', deb, OVERRIDES],
      {
        encoding: 'utf8',
      },
    )
    expect(shipped).toBe(readFileSync(path.join(ROOT, 'packaging/lintian-overrides'), 'utf8'))
    expectReasons(shipped)
  })
})

import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHelp } from '../../hub/cli/usage.ts'
import { bundleHub } from '../../ota/bundle.ts'
import { debianCopyright } from '../../ota/debian-copyright.ts'
import { changelogFor } from '../../ota/debian-docs.ts'
import { ROOT } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'

// The documents ota build writes into the package from packaging/ (ota/debian-docs.ts): the changelog, the
// copyright file and the manual page.

const work = tempDir('debian-docs-')
afterAll(() => work.remove())
const packaging = (file: string) => readFileSync(path.join(ROOT, 'packaging', file), 'utf8')

/** What dpkg-parsechangelog reads from a changelog: its fields, one entry (the latest) by default. */
function parseChangelog(text: string, ...args: string[]): string {
  const file = path.join(work.path, 'changelog')
  writeFileSync(file, text)
  return execFileSync('dpkg-parsechangelog', ['-l', file, ...args], { encoding: 'utf8' })
}

describe('the changelog', () => {
  it('a version packaging/changelog lacks: an entry on top, signed as the latest one, that dpkg reads', () => {
    const changelog = changelogFor(packaging('changelog'), {
      version: '7.8.9',
      builtAt: '2026-12-01T10:20:30.000Z',
    })
    const fields = parseChangelog(changelog)
    expect(fields).toMatch(/^Version: 7\.8\.9$/m)
    expect(fields).toMatch(/^Date: Tue, 01 Dec 2026 10:20:30 \+0000$/m)
    expect(fields).toMatch(/^Maintainer: Print Hub releases <releases@print-hub\.invalid>$/m)
    expect(changelog.endsWith(packaging('changelog'))).toBe(true)
  })

  it('a version it has: that entry and the older ones', () => {
    const changelog = `print-hub (0.2.0) stable; urgency=medium\n\n  * Two.\n\n -- A B <a@b.example>  Wed, 02 Dec 2026 10:00:00 +0000\n\n${packaging('changelog')}`
    expect(changelogFor(changelog, { version: '0.1.0', builtAt: '2026-12-03T00:00:00Z' })).toBe(
      packaging('changelog'),
    )
    expect(parseChangelog(changelog, '--all')).toMatch(/^Version: 0\.2\.0$/m)
  })
})

describe('the copyright file', () => {
  let copyright: string
  let paragraphs: string[]
  const paragraphOf = (files: string) => paragraphs.find((p) => p.split('\n').some((l) => l.endsWith(files)))

  beforeAll(async () => {
    // A staged release: a runtime LICENSE that quotes the Apache License, an MIT package and an Apache one.
    const stage = path.join(work.path, 'stage')
    const release = path.join(stage, 'opt/print-hub/releases/1.2.3')
    mkdirSync(path.join(release, 'runtime'), { recursive: true })
    const apache = readFileSync(path.join(ROOT, 'node_modules/ghostscript4js/LICENSE'), 'utf8').replace(
      /^/gm,
      '    ',
    )
    writeFileSync(
      path.join(release, 'runtime/LICENSE'),
      `Node.js is licensed for use as follows:\n\n"""\nCopyright Node.js contributors. All rights reserved.\n"""\n\n` +
        `- OpenSSL, located at deps/openssl, is licensed as follows:\n  """\n${apache}\n  """\n`,
    )
    for (const name of ['ms', 'ghostscript4js'])
      cpSync(path.join(ROOT, 'node_modules', name), path.join(release, 'node_modules', name), {
        recursive: true,
        filter: (source) => !/\/(build|src|deps|node_modules)$/.test(source),
      })
    const { packages } = await bundleHub(ROOT, path.join(work.path, 'bundle'), '1.2.3')
    copyright = debianCopyright(ROOT, stage, release, packages)
    paragraphs = copyright.split('\n\n')
  })

  it('is packaging/copyright with a paragraph for each bundled thing in place of @BUNDLED@', () => {
    const [head, tail] = packaging('copyright').split('\n@BUNDLED@\n')
    expect(copyright).not.toContain('@BUNDLED@')
    expect(copyright.startsWith(head!)).toBe(true)
    expect(copyright.endsWith(tail!)).toBe(true)
  })

  it('Node.js: its LICENSE, the Apache License by reference to /usr/share/common-licenses', () => {
    const runtime = paragraphOf('Files: opt/print-hub/releases/1.2.3/runtime/*')
    expect(runtime).toContain('Copyright: Copyright Node.js contributors. All rights reserved.')
    expect(runtime).toContain('/usr/share/common-licenses/Apache-2.0')
    expect(runtime).not.toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION')
  })

  it('an installed package: its copyright lines and license file; the Apache License by reference', () => {
    const ms = paragraphOf('node_modules/ms/*')!
    expect(ms).toContain('opt/print-hub/releases/1.2.3/node_modules/ms/*')
    expect(ms).toMatch(/^Copyright: Copyright \(c\) 20\d\d Vercel, Inc\.$/m)
    expect(ms).toMatch(/^License: MIT\n The MIT License \(MIT\)\n \.\n/m)
    const gs = paragraphOf('opt/print-hub/releases/1.2.3/node_modules/ghostscript4js/*')!
    expect(gs).toMatch(/^Copyright: Nicola Del Gobbo <nicoladelgobbo@gmail\.com>$/m)
    expect(gs.split('\n').at(-1)).toBe('License: Apache-2.0')
    expect(copyright).toMatch(
      /^License: Apache-2\.0\n(?: .*\n)* \/usr\/share\/common-licenses\/Apache-2\.0\.$/m,
    )
  })

  it('the npm packages compiled into lib/*.mjs, under their paths in the repository', () => {
    for (const name of ['pino', 'mqtt', 'typebox'])
      expect(paragraphOf(`node_modules/${name}/*`), name).toBeDefined()
    // Loaded from the release's node_modules, not compiled in.
    expect(paragraphOf(' node_modules/better-sqlite3/*')).toBeUndefined()
    expect(copyright).not.toMatch(/^Files: node_modules\/better-sqlite3\//m)
  })
})

describe('the manual page print-hub(8)', () => {
  const page = packaging('print-hub.8')
  const help = runHelp('print-hub')

  it('documents each option, environment variable, printer URI form and URI option of print-hub run --help', () => {
    const options = [...help.matchAll(/^ {2}(--[a-z]+)/gm)].map((m) => m[1]!)
    const environment = [...help.slice(help.indexOf('environment:')).matchAll(/^ {2}([A-Z][A-Z_]+) /gm)].map(
      (m) => m[1]!,
    )
    const schemes = [...help.matchAll(/^ {2}([a-z]+):\S/gm)].map((m) => m[1]!)
    const uris = help.slice(help.indexOf('printer URIs'), help.indexOf('environment:'))
    const uriOptions = new Set([...uris.matchAll(/\b([a-z_]+)=/g)].map((m) => m[1]!))
    expect(options).toEqual(['--cloud', '--data', '--enroll', '--printer', '--help'])
    expect(environment.length).toBeGreaterThan(10)
    expect(schemes).toEqual(['socket', 'serial', 'usblp', 'usb', 'ipp'])
    for (const option of options) expect(page, option).toContain(option.replaceAll('-', '\\-'))
    for (const name of environment) expect(page, name).toMatch(new RegExp(`^\\.B ${name}$`, 'm'))
    for (const scheme of [...schemes, 'ipps']) expect(page, scheme).toContain(`\\fB${scheme}:`)
    expect(uriOptions.size).toBeGreaterThan(10)
    for (const option of uriOptions) expect(page, option).toContain(`${option}=`)
  })

  it('names the files the package installs and the hub uses', () => {
    for (const file of ['/etc/default/print\\-hub', '/var/lib/print\\-hub', '/opt/print\\-hub'])
      expect(page).toMatch(new RegExp(`^\\.I ${file.replaceAll('\\', '\\\\')}$`, 'm'))
  })

  it('has no mistake groff warns about', () => {
    const file = path.join(work.path, 'print-hub.8')
    writeFileSync(file, page)
    // As lintian runs it (lintian's Documentation::Manual check).
    const out = execFileSync(
      'sh',
      ['-c', 'man --warnings -E UTF-8 -l -Tutf8 -Z "$1" 2>&1 >/dev/null', 'sh', file],
      {
        encoding: 'utf8',
        env: { ...process.env, LC_ALL: 'C.UTF-8', MANROFFSEQ: '', MANWIDTH: '80' },
      },
    )
    expect(out).toBe('')
  })
})

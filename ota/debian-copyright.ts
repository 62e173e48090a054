import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/**
 * /usr/share/doc/print-hub/copyright (Debian policy §12.5) in the machine-readable format
 * (https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/): packaging/copyright, with a paragraph
 * in place of its @BUNDLED@ line for the Node.js runtime, each npm package of the release's node_modules and
 * each npm package esbuild compiled into lib/, with the copyright lines and the license text of its own files.
 */

const BUNDLED = '@BUNDLED@'
/** Licenses whose text Debian ships in /usr/share/common-licenses: packaging/copyright points there instead. */
const COMMON_LICENSE_TEXT =
  /TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION|GNU (LESSER )?GENERAL PUBLIC LICENSE/
const COPYRIGHT_LINE = /^\s*((Copyright|COPYRIGHT)\s+(\([cC]\)|©|\d|[A-Z][a-z])|\([cC]\)\s*\d|©)/
const LICENSE_FILE = /^(licen[cs]e|copying)([.-].*)?$/i

interface Paragraph {
  files: string[]
  copyright: string[]
  /** A short name, or an expression of them ("MIT and LGPL-2.1+"). */
  license: string
  /** The license text; without one, a stand-alone License paragraph of packaging/copyright has it. */
  text?: string
}

/** `bundled`: the directories of the packages compiled into lib/*.mjs (what bundleHub reports). */
export function debianCopyright(
  repoRoot: string,
  stage: string,
  release: string,
  bundled: readonly string[],
): string {
  const template = readFileSync(path.join(repoRoot, 'packaging/copyright'), 'utf8')
  if (!template.includes(`\n${BUNDLED}\n`)) throw new Error(`packaging/copyright has no ${BUNDLED} line`)
  const installed = path.relative(stage, release)
  const paragraphs = [
    runtimeParagraph(path.join(release, 'runtime'), `${installed}/runtime`),
    ...installedPackages(path.join(release, 'node_modules')).map((dir) =>
      packageParagraph(dir, `${path.relative(stage, dir)}/*`),
    ),
    ...bundled.map((dir) => packageParagraph(dir, `${path.relative(repoRoot, dir)}/*`)),
  ]
  const standalone = new Set([...template.matchAll(/^License: (\S+)$/gm)].map((m) => m[1]))
  for (const p of paragraphs) {
    if (p.text !== undefined) continue
    for (const name of p.license.split(/ (?:and|or) /))
      if (!standalone.has(name))
        throw new Error(
          `${p.files[0]}: license ${name} has no text here nor a License paragraph in packaging/copyright`,
        )
  }
  return template.replace(`\n${BUNDLED}\n`, `\n${merged(paragraphs).map(format).join('\n\n')}\n`)
}

/** Node.js and the libraries it includes, as its LICENSE says; the Apache License's text by reference. */
function runtimeParagraph(runtime: string, installed: string): Paragraph {
  const text = readFileSync(path.join(runtime, 'LICENSE'), 'utf8')
  return {
    files: [`${installed}/*`],
    copyright: copyrightLines(text),
    license: 'Node.js',
    text: withoutApacheText(text),
  }
}

/** Each package of a node_modules tree, nested ones included. */
function installedPackages(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return []
  const dirs: string[] = []
  for (const name of readdirSync(nodeModules).sort()) {
    if (name.startsWith('.')) continue
    const names = name.startsWith('@')
      ? readdirSync(path.join(nodeModules, name))
          .sort()
          .map((n) => `${name}/${n}`)
      : [name]
    for (const pkg of names) {
      const dir = path.join(nodeModules, pkg)
      if (!existsSync(path.join(dir, 'package.json'))) continue
      dirs.push(dir, ...installedPackages(path.join(dir, 'node_modules')))
    }
  }
  return dirs
}

interface Person {
  name: string
  email?: string
}

interface PackageJson {
  name: string
  version: string
  license?: string
  licenses?: { type: string }[]
  author?: string | Person
  contributors?: (string | Person)[]
}

function packageParagraph(dir: string, files: string): Paragraph {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson
  const license = licenseName(manifest)
  const file = readdirSync(dir)
    .filter((name) => LICENSE_FILE.test(name))
    .sort()[0]
  const text = file ? readFileSync(path.join(dir, file), 'utf8') : undefined
  const lines = text ? copyrightLines(text) : []
  if (lines.length === 0) lines.push(...authorsOf(manifest))
  return {
    files: [files],
    copyright: lines,
    license,
    text: text === undefined || COMMON_LICENSE_TEXT.test(text) ? undefined : text,
  }
}

/** package.json's SPDX expression in the copyright format's words: "(MIT OR Apache-2.0)" → "MIT or Apache-2.0". */
function licenseName(manifest: PackageJson): string {
  const spdx = manifest.license ?? manifest.licenses?.map((l) => l.type).join(' OR ')
  if (!spdx) throw new Error(`${manifest.name} ${manifest.version} names no license`)
  return spdx.replace(/[()]/g, '').replace(/ OR /g, ' or ').replace(/ AND /g, ' and ')
}

/** package.json's author, else its contributors: for a package whose license file names nobody. */
function authorsOf(manifest: PackageJson): string[] {
  const people = manifest.author ? [manifest.author] : (manifest.contributors ?? [])
  const names = people.map((p) => (typeof p === 'string' ? p : p.email ? `${p.name} <${p.email}>` : p.name))
  return names.length > 0 ? names : [`the authors of ${manifest.name}`]
}

function copyrightLines(text: string): string[] {
  const lines = text
    .split('\n')
    .filter((line) => COPYRIGHT_LINE.test(line))
    .map((line) => line.trim())
  return [...new Set(lines)]
}

/** Each copy of the Apache License 2.0's terms, replaced by where Debian keeps them. */
function withoutApacheText(text: string): string {
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (
      lines[i]!.trim() !== 'Apache License' ||
      !lines[i + 1]?.trim().startsWith('Version 2.0, January 2004')
    )
      continue
    const end = lines.findIndex((line, j) => j > i && line.trim() === 'END OF TERMS AND CONDITIONS')
    if (end < 0) throw new Error('an Apache License 2.0 text without its END OF TERMS AND CONDITIONS')
    const indent = /^\s*/.exec(lines[end]!)![0]
    lines.splice(
      i,
      end - i + 1,
      `${indent}The Apache License, Version 2.0: on Debian systems, its complete text is in`,
      `${indent}/usr/share/common-licenses/Apache-2.0.`,
    )
  }
  return lines.join('\n')
}

/** Packages with the same notices (one package at several places) share a paragraph. */
function merged(paragraphs: Paragraph[]): Paragraph[] {
  const byNotice = new Map<string, Paragraph>()
  for (const p of paragraphs) {
    const key = JSON.stringify([p.copyright, p.license, p.text])
    const same = byNotice.get(key)
    if (same) same.files.push(...p.files)
    else byNotice.set(key, { ...p, files: [...p.files] })
  }
  return [...byNotice.values()]
}

/** A paragraph in the format's syntax: continuation lines start with a space, an empty line is " .". */
function format(p: Paragraph): string {
  const continued = (lines: string[]) =>
    lines.map((line) => (line.trim() === '' ? ' .' : ` ${line.trimEnd()}`))
  const text = p.text === undefined ? [] : continued(p.text.replace(/\t/g, '        ').trim().split('\n'))
  return [
    `Files: ${p.files.join('\n ')}`,
    `Copyright: ${p.copyright.join('\n ')}`,
    `License: ${p.license}`,
    ...text,
  ].join('\n')
}

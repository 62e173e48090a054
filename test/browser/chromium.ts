import path from 'node:path'

/** Where browser tests keep their screenshots (git-ignored). */
export const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts')

/** Debian's chromium with the flags this machine needs (docs/developer-platform.md, "Browser test"). */
export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

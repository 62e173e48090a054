import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { ConfigError } from './env-text.ts'

/** Makes DATA_DIR if it is missing and checks that this process can write it; answers its absolute path. */
export function prepareDataDir(dir: string): string {
  const absolute = path.resolve(dir)
  try {
    mkdirSync(absolute, { recursive: true })
    // A real write, not access(2): root passes every permission check but not a read-only mount.
    const probe = path.join(absolute, `.write-probe-${process.pid}`)
    writeFileSync(probe, '')
    rmSync(probe)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    throw new ConfigError('DATA_DIR', `${absolute} is not a writable directory (${code})`)
  }
  return absolute
}

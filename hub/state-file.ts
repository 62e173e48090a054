import { randomBytes } from 'node:crypto'
import { renameSync, writeFileSync } from 'node:fs'

/**
 * Replaces a file of the hub's state directory whole (a temporary file renamed over it, POSIX rename(2) being
 * atomic), readable by the hub's user only: a crash leaves the old file or the new one, never half of one.
 */
export function writeStateFile(file: string, text: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(temp, text, { mode: 0o600 })
  renameSync(temp, file)
}

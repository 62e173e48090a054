import { readFileSync } from 'node:fs'
import type { Catalog } from '../../ota/catalog.ts'
import { UpdateFailed } from './release-download.ts'
import { parseRecord, writeRecord } from './update-records.ts'

/**
 * The hub's defence against an older or stale catalog (docs/hub-updates.md: Rollback, freeze and the other
 * attacks). It keeps the highest catalog serial it has verified in its data directory (`serial=N`, shared by
 * every release and kept across restarts, self-updates and package upgrades), refuses a catalog with a lower
 * serial, one past its expiry, and one signed before serials and expiries existed.
 */

/** The record's name in the hub's data directory. */
export const CATALOG_RECORD_FILE = 'release-catalog'

/** The highest serial recorded in `file`; 0 when there is none. */
export function readHighestSerial(file: string): number {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return 0
  }
  const serial = Number(parseRecord(text).serial)
  return Number.isSafeInteger(serial) && serial > 0 ? serial : 0
}

/**
 * Checks a verified catalog against the record and the clock, then raises the record to its serial.
 * Throws UpdateFailed `catalog_rejected` when it is refused.
 */
export function acceptFreshCatalog(catalog: Catalog, recordFile: string, now: number): void {
  const { serial, expires_at: expiresAt } = catalog
  if (serial === undefined || expiresAt === undefined)
    throw new UpdateFailed(
      'catalog_rejected',
      'the catalog has no serial and expiry: re-sign it with ota resign',
    )
  const highest = readHighestSerial(recordFile)
  if (serial < highest)
    throw new UpdateFailed(
      'catalog_rejected',
      `the catalog has serial ${serial}, lower than serial ${highest} this hub has verified: an older catalog is being served`,
    )
  if (now >= Date.parse(expiresAt))
    throw new UpdateFailed(
      'catalog_rejected',
      `the catalog expired at ${expiresAt}: the release key’s holder must re-sign it (ota resign)`,
    )
  if (serial > highest) {
    try {
      writeRecord(recordFile, { serial })
    } catch (error) {
      throw new UpdateFailed(
        'install_failed',
        `the catalog's serial could not be recorded: ${(error as Error).message}`,
      )
    }
  }
}

import type { RawLanguage } from '../../../protocol/enums.ts'
import { ApiError } from '../../api-error.ts'
import { findForbiddenCpcl } from './cpcl.ts'
import { findForbiddenEscPos } from './escpos.ts'
import type { RawFinding } from './finding.ts'
import { findForbiddenTspl } from './tspl.ts'
import { findForbiddenZpl } from './zpl.ts'

export type { RawFinding } from './finding.ts'

const INSPECTORS: Record<RawLanguage, (bytes: Buffer) => RawFinding | null> = {
  escpos: findForbiddenEscPos,
  zpl: findForbiddenZpl,
  tspl: findForbiddenTspl,
  cpcl: findForbiddenCpcl,
}

const LANGUAGE_NAMES: Record<RawLanguage, string> = {
  escpos: 'ESC/POS',
  zpl: 'ZPL',
  tspl: 'TSPL',
  cpcl: 'CPCL',
}

/** The first command in `bytes` that RAW inspection refuses, or null. Pure and synchronous; linear in size. */
export function findForbiddenCommand(bytes: Buffer, language: RawLanguage): RawFinding | null {
  return INSPECTORS[language](bytes)
}

/**
 * Refuses a RAW payload that would change the printer's stored configuration, network settings or firmware:
 * throws `raw_command_forbidden` (422) with `details: { reason, command, offset }`. Normal label and receipt
 * commands pass.
 */
export function inspectRaw(bytes: Buffer, language: RawLanguage): void {
  const found = findForbiddenCommand(bytes, language)
  if (!found) return
  throw new ApiError(
    'raw_command_forbidden',
    `The ${LANGUAGE_NAMES[language]} payload holds ${found.command} at byte ${found.offset}, a command that changes ` +
      "the printer's stored configuration, network settings or firmware; such commands are not accepted.",
    { reason: found.reason, command: found.command, offset: found.offset },
  )
}

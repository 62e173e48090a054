import type { RawLanguage } from '../../protocol/enums.ts'
import { cpclDriver } from './cpcl.ts'
import { escposDriver } from './escpos.ts'
import type { LanguageDriver } from './language-driver.ts'
import { tsplDriver } from './tspl.ts'
import { zplDriver } from './zpl.ts'

export type { LanguageDriver } from './language-driver.ts'

/** Every language the hub drives, by name. */
export const LANGUAGE_DRIVERS: Readonly<Record<RawLanguage, LanguageDriver>> = {
  escpos: escposDriver,
  zpl: zplDriver,
  tspl: tsplDriver,
  cpcl: cpclDriver,
}

export function driverFor(language: RawLanguage): LanguageDriver {
  return LANGUAGE_DRIVERS[language]
}

import { randomInt } from 'node:crypto'

/**
 * RFC 8628 §6.1: a user code short enough to type on a phone, from consonants only (no vowels, so no words;
 * no 0/O, 1/I/L, 5/S-style look-alikes). 20^8 ≈ 2.6·10^10 codes; guessing is limited per link and per address.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const LENGTH = 8

/** A fresh code, shown as XXXX-XXXX. */
export function generateUserCode(): string {
  let code = ''
  for (let i = 0; i < LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/**
 * The code as stored (hashed) from what an installer typed: case, spaces and dashes ignored (RFC 8628 §6.1);
 * undefined when it cannot be a code.
 */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== LENGTH) return undefined
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return undefined
  return code
}

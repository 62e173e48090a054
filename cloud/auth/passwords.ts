import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto'

/**
 * Passwords people choose (console users), unlike machine secrets (secrets.ts), are hashed with scrypt
 * (RFC 7914) at N=2^15, r=8, p=3: one of the OWASP Password Storage Cheat Sheet's equivalent scrypt settings
 * (32 MiB of memory per hash; docs/console.md gives the figures). Stored as `scrypt$N$r$p$salt$hash` (salt and
 * hash base64url), so that a later change of parameters still verifies the hashes made before it. node's
 * scrypt runs on the libuv thread pool: the event loop is not blocked.
 */
export const PASSWORD_KDF = { N: 2 ** 15, r: 8, p: 3 } as const

const SALT_BYTES = 16
const HASH_BYTES = 32
/** Memory scrypt may use: 128·N·r·p bytes at most for the parameters it accepts (node's default is 32 MiB). */
const MAX_MEMORY = 256 * 1024 * 1024

/** NIST SP 800-63B §5.1.1.2: at least 8 characters; long passphrases allowed (a bound keeps the KDF's input small). */
export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 128

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, HASH_BYTES, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    )
  })
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const hash = await derive(password, salt, PASSWORD_KDF)
  const { N, r, p } = PASSWORD_KDF
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`
}

interface Parsed {
  options: { N: number; r: number; p: number }
  salt: Buffer
  hash: Buffer
}

function parse(stored: string): Parsed | null {
  const [kind, n, r, p, salt, hash, ...rest] = stored.split('$')
  if (kind !== 'scrypt' || rest.length > 0 || salt === undefined || hash === undefined) return null
  const options = { N: Number(n), r: Number(r), p: Number(p) }
  if (![options.N, options.r, options.p].every((v) => Number.isSafeInteger(v) && v > 0)) return null
  return { options, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') }
}

/** A stand-in hash for a user who has none (unknown e-mail, no password yet): the same work, never a match. */
let standInHash: Promise<Parsed> | undefined
const standIn = (): Promise<Parsed> => {
  standInHash ??= hashPassword(randomBytes(16).toString('hex')).then((text) => parse(text) as Parsed)
  return standInHash
}

/** Makes the stand-in hash now, so that not even the first unknown e-mail takes longer than a wrong password. */
export async function prepareStandIn(): Promise<void> {
  await standIn()
}

/**
 * Whether `password` is the one `stored` was made from, compared in constant time. With no stored hash it
 * still derives one (against a stand-in), so that an unknown e-mail takes as long as a wrong password.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parsed = stored === null ? null : parse(stored)
  const target = parsed ?? (await standIn())
  const candidate = await derive(password, target.salt, target.options)
  const equal = candidate.length === target.hash.length && timingSafeEqual(candidate, target.hash)
  return parsed !== null && equal
}

import { scryptSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashPassword, verifyPassword } from '../../cloud/auth/passwords.ts'

describe('console password hashing', () => {
  it('stores scrypt$N$r$p$salt$hash with N=2^15 r=8 p=3 and a fresh salt each time', async () => {
    const [a, b] = await Promise.all([hashPassword('same passphrase'), hashPassword('same passphrase')])
    expect(a).toMatch(/^scrypt\$32768\$8\$3\$[\w-]{22}\$[\w-]{43}$/)
    expect(a.split('$')[4]).not.toBe(b.split('$')[4])
    expect(await verifyPassword('same passphrase', a)).toBe(true)
    expect(await verifyPassword('same passphrase ', a)).toBe(false)
  })

  it('verifies a hash made with other parameters (they are read from it), and the same text in NFKC', async () => {
    const salt = Buffer.from('0123456789abcdef')
    const digest = scryptSync('five café', salt, 32, { N: 1024, r: 8, p: 1 })
    const older = `scrypt$1024$8$1$${salt.toString('base64url')}$${digest.toString('base64url')}`
    // A ligature and a combining accent: NFKC makes them the text the hash was made from.
    expect(await verifyPassword('\ufb01ve cafe\u0301', older)).toBe(true)
    expect(await verifyPassword('five cafe', older)).toBe(false)
  })

  it('never matches without a stored hash or with a malformed one', async () => {
    for (const stored of [
      null,
      '',
      'scrypt$x$8$1$a$b',
      'bcrypt$2b$10$abc',
      'scrypt$1024$8$1$c2FsdA$aGFzaA$extra',
    ]) {
      expect(await verifyPassword('anything', stored)).toBe(false)
    }
  })
})

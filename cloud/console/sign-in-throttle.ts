import { quotaAddress } from '../plugins/quota-address.ts'
import type { SignInFailureRepository } from '../storage/sign-in-failures.ts'
import { normalizeEmail } from '../storage/users.ts'
import type { ConsoleClock } from './console-context.ts'

/**
 * Failed sign-ins (docs/console.md, "Sign-in throttling"), counted in 15-minute windows per client address
 * (IPv6 per /64, as the request quotas) and per e-mail, in the database so that every cloud node counts
 * together. Once a key has a third of its limit in failures, every further attempt's answer waits 1 s,
 * doubling with each failure to at most 8 s; once it has its limit, attempts are refused (429 with
 * Retry-After) until its window ends, a right password included. A success clears the e-mail's count, not the
 * address's (one's own account must not reset an attacker's address).
 */
export const SIGN_IN_WINDOW_MS = 15 * 60_000
const FIRST_DELAY_MS = 1000
const MAX_DELAY_MS = 8000

/** Failures per window before refusal (CONSOLE_SIGN_IN_FAILURES_PER_IP and _PER_EMAIL: 30 and 10). */
export interface SignInLimits {
  perIp: number
  perEmail: number
}

export type ThrottleVerdict =
  | { refused: false; delayMs: number }
  | { refused: true; retryAfterSeconds: number }

export interface SignInThrottle {
  /** What this attempt gets before its password is checked. */
  check(ip: string, email: string): Promise<ThrottleVerdict>
  failed(ip: string, email: string): Promise<void>
  succeeded(email: string): Promise<void>
}

const emailKey = (email: string) => `email:${normalizeEmail(email)}`
const keysOf = (ip: string, email: string) => ({ address: `ip:${quotaAddress(ip)}`, email: emailKey(email) })

export function createSignInThrottle(
  failures: SignInFailureRepository,
  clock: ConsoleClock,
  limits: SignInLimits,
): SignInThrottle {
  const windowMs = SIGN_IN_WINDOW_MS
  const bounds = (refuseAt: number) => ({ refuseAt, slowAfter: Math.floor(refuseAt / 3) })
  return {
    async check(ip, email) {
      const keys = keysOf(ip, email)
      const now = clock.now()
      const counts = await failures.current([keys.address, keys.email], now, windowMs)
      const checks = [
        { count: counts.get(keys.address), ...bounds(limits.perIp) },
        { count: counts.get(keys.email), ...bounds(limits.perEmail) },
      ]
      let retryAfterMs = 0
      let excess = 0
      for (const { count, slowAfter, refuseAt } of checks) {
        if (!count) continue
        if (count.failures >= refuseAt) {
          retryAfterMs = Math.max(retryAfterMs, count.windowStartedAt + windowMs - now)
        }
        excess = Math.max(excess, count.failures - slowAfter + 1)
      }
      if (retryAfterMs > 0) return { refused: true, retryAfterSeconds: Math.ceil(retryAfterMs / 1000) }
      const delayMs = excess > 0 ? Math.min(FIRST_DELAY_MS * 2 ** (excess - 1), MAX_DELAY_MS) : 0
      return { refused: false, delayMs }
    },
    async failed(ip, email) {
      const keys = keysOf(ip, email)
      const now = clock.now()
      await failures.record(keys.address, now, windowMs)
      await failures.record(keys.email, now, windowMs)
      await failures.purgeEnded(now, windowMs)
    },
    async succeeded(email) {
      await failures.clear(emailKey(email))
    },
  }
}

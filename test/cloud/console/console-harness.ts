import type { LightMyRequestResponse } from 'fastify'
import { hashPassword } from '../../../cloud/auth/passwords.ts'
import type { ConsoleClock, ConsoleUser, UserRole } from '../../../cloud/console/console-context.ts'
import { startTestCloud, type TestAccount, type TestCloud, type TestCloudOptions } from '../test-cloud.ts'

/** The password of every user `signIn` makes. */
export const CONSOLE_PASSWORD = 'correct horse battery staple'

/** A browser-like client of the console: its own cookies, and the CSRF token of the last page that had one. */
export interface ConsoleSession {
  /** GET with the session cookie. */
  get(path: string): Promise<LightMyRequestResponse>
  /**
   * POST an application/x-www-form-urlencoded form with the session cookie and the session's CSRF token
   * (unless `fields._csrf` is given; a client that has seen none first GETs the sign-in page for one).
   */
  post(path: string, fields?: Record<string, string>): Promise<LightMyRequestResponse>
  /** The cookies it holds now, by name. */
  cookies(): ReadonlyMap<string, string>
}

export interface ConsoleClient extends ConsoleSession {
  user: ConsoleUser
}

export interface ConsoleHarness {
  /** From test/cloud/test-cloud.ts: app, storage, config, createAccount, close. */
  cloud: TestCloud
  /** An account with a hub and two printers (test-cloud.ts). */
  account: TestAccount
  otherAccount: TestAccount
  /** A new user of the account (default: `account`) with that role, signed in through the real sign-in form. */
  signIn(role: UserRole, accountId?: string): Promise<ConsoleClient>
  /** A client with no session (for signed-out requests); `address` is its remote address (127.0.0.1). */
  anonymous(address?: string): ConsoleSession
  close(): Promise<void>
}

/** A console clock a test moves by hand; `sleeps` records the waits asked of it (none really happen). */
export class ManualClock implements ConsoleClock {
  readonly sleeps: number[] = []
  constructor(private time = Date.now()) {}
  now(): number {
    return this.time
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms)
  }
  advance(ms: number): void {
    this.time += ms
  }
}

const CSRF_FIELD = /name="_csrf" value="([^"]*)"/

let passwordHash: Promise<string> | undefined

/** A console client on `cloud.app` through inject: cookies kept as a browser keeps them (by name). */
export function consoleSession(cloud: TestCloud, address = '127.0.0.1'): ConsoleSession {
  const jar = new Map<string, string>()
  let csrfToken: string | undefined
  const send = async (
    method: 'GET' | 'POST',
    path: string,
    payload?: string,
  ): Promise<LightMyRequestResponse> => {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const response = await cloud.app.inject({
      method,
      url: path,
      remoteAddress: address,
      headers: {
        ...(cookie && { cookie }),
        ...(payload !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(payload !== undefined && { payload }),
    })
    for (const set of response.cookies as { name: string; value: string; expires?: Date }[]) {
      if (set.value === '' || (set.expires && set.expires.getTime() <= Date.now())) jar.delete(set.name)
      else jar.set(set.name, set.value)
    }
    const token = CSRF_FIELD.exec(response.body)?.[1]
    if (token !== undefined && token !== '') csrfToken = token
    return response
  }
  return {
    get: (path) => send('GET', path),
    async post(path, fields = {}) {
      if (fields._csrf === undefined && csrfToken === undefined) await send('GET', '/console/sign-in')
      const form = new URLSearchParams({ _csrf: csrfToken ?? '', ...fields })
      return send('POST', path, form.toString())
    },
    cookies: () => jar,
  }
}

/**
 * A test cloud (real SQLite file) with two accounts, and console users signed in through the real sign-in form.
 * `options.consoleClock` (a ManualClock) moves the console's time without sleeping.
 */
export async function startConsoleHarness(options: TestCloudOptions = {}): Promise<ConsoleHarness> {
  const cloud = await startTestCloud(options)
  const account = await cloud.createAccount('Corner shop')
  const otherAccount = await cloud.createAccount('Other shop')
  let made = 0
  return {
    cloud,
    account,
    otherAccount,
    async signIn(role, accountId = account.accountId) {
      made += 1
      const email = `${role}-${made}-${accountId.slice(0, 8)}@example.test`
      const user = await cloud.storage.users.create({ accountId, email, role }, new Date())
      if (!user) throw new Error(`signIn: ${email} is taken`)
      passwordHash ??= hashPassword(CONSOLE_PASSWORD)
      await cloud.storage.users.setPasswordHash(user.user_id, await passwordHash)
      const session = consoleSession(cloud)
      const signedIn = await session.post('/console/sign-in', { email, password: CONSOLE_PASSWORD })
      if (signedIn.statusCode !== 303) {
        throw new Error(
          `signIn: the sign-in form answered ${signedIn.statusCode}: ${signedIn.body.slice(0, 300)}`,
        )
      }
      // The session id and its CSRF secret are new after sign-in: a page's form gives the token.
      const home = await session.get('/console')
      if (!CSRF_FIELD.test(home.body)) {
        throw new Error(`signIn: GET /console answered ${home.statusCode} without a CSRF field`)
      }
      return { ...session, user: { userId: user.user_id, accountId, email, role } }
    },
    anonymous: (address) => consoleSession(cloud, address),
    close: () => cloud.close(),
  }
}

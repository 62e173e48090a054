import { afterEach, describe, expect, it } from 'vitest'
import { testDatabases } from '../../helpers/postgres-server.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import {
  CONSOLE_PASSWORD,
  type ConsoleHarness,
  consoleSession,
  ManualClock,
  startConsoleHarness,
} from './console-harness.ts'

// Several cloud nodes behind a load balancer share one PostgreSQL database: a session made on one is valid on
// another, ended on one it is ended on every one, and failed sign-ins count together.
describe('console sessions across two cloud nodes on one PostgreSQL database', () => {
  const databases = testDatabases()
  let harness: ConsoleHarness
  let second: TestCloud
  afterEach(async () => {
    await second?.close()
    await harness?.close()
  })

  it('signs in on one node, works on the other, signs out on the other and is signed out on both', async () => {
    const env = { DATABASE_URL: await databases.migrated() }
    harness = await startConsoleHarness({ env })
    second = await startTestCloud({ env })
    const owner = await harness.signIn('owner')
    const cookie = `console_session=${owner.cookies().get('console_session')}`
    const onSecond = (path: string) => second.app.inject({ method: 'GET', url: path, headers: { cookie } })
    const users = await onSecond('/console/users')
    expect(users.statusCode).toBe(200)
    expect(users.body).toContain(`<span class="who">${owner.user.email}</span>`)

    const token = /name="_csrf" value="([^"]+)"/.exec(users.body)?.[1] ?? ''
    const out = await second.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(token)}`,
    })
    expect(out.statusCode).toBe(303)
    expect((await owner.get('/console')).statusCode).toBe(303)
    expect((await onSecond('/console')).statusCode).toBe(303)
  })

  it('counts failed sign-ins on both nodes together', async () => {
    const env = { DATABASE_URL: await databases.migrated(), CONSOLE_SIGN_IN_FAILURES_PER_EMAIL: '4' }
    const clock = new ManualClock()
    harness = await startConsoleHarness({ env, consoleClock: clock })
    second = await startTestCloud({ env, consoleClock: clock })
    const owner = await harness.signIn('owner')
    for (const cloud of [harness.cloud, second, harness.cloud, second]) {
      const failed = await consoleSession(cloud).post('/console/sign-in', {
        email: owner.user.email,
        password: 'no',
      })
      expect(failed.statusCode).toBe(422)
    }
    for (const cloud of [harness.cloud, second]) {
      const refused = await consoleSession(cloud).post('/console/sign-in', {
        email: owner.user.email,
        password: CONSOLE_PASSWORD,
      })
      expect(refused.statusCode).toBe(429)
    }
    expect(clock.sleeps).toStrictEqual([1000, 2000, 4000])
  })
})

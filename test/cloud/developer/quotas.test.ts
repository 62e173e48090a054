import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, expectInjectedError, expectRateLimitHeaders } from '../api/api-helpers.ts'
import { registerPartner } from '../partner/partner-helpers.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { registerApplication } from './applications.ts'

const WINDOW = 60

describe('quotas keyed by who calls (issue 10 point 6)', () => {
  let cloud: TestCloud

  beforeAll(async () => {
    cloud = await startTestCloud({
      env: {
        RATE_LIMIT_WINDOW_SECONDS: String(WINDOW),
        RATE_LIMIT_PER_APPLICATION: '3',
        RATE_LIMIT_PER_INSTALLATION: '2',
      },
    })
  })
  afterAll(() => cloud?.close())

  it("counts partner requests per application: one partner's burst leaves another's quota alone", async () => {
    const busy = await registerPartner(cloud, true, 'Busy partner')
    const calm = await registerPartner(cloud, true, 'Calm partner')
    for (let i = 0; i < 3; i++) {
      const res = await busy.request('GET', '/partner-api/v1/accounts')
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-scope']).toBe('application')
      expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i))
    }
    const refused = await busy.request('GET', '/partner-api/v1/accounts')
    expectInjectedError(refused, 'rate_limited', expect.objectContaining({ scope: 'application', limit: 3 }))
    expectRateLimitHeaders((name) => refused.headers[name] as string | undefined, 3, 'application', WINDOW)
    expect((await calm.request('GET', '/partner-api/v1/accounts')).statusCode).toBe(200)
  })

  it("counts installation tokens per installation, apart from the account's own API clients", async () => {
    const developer = await registerApplication(cloud.storage, cloud.config.publicUrl)
    const account = await cloud.createAccount()
    const installation = await cloud.storage.applications.install(developer.appId, account.accountId, [
      'printers:read',
    ])
    const issued = await cloud.app.inject({
      method: 'POST',
      url: `/developer-api/v1/app-installations/${installation.installation_id}/access-tokens`,
      headers: bearer(await developer.assertion()),
    })
    expect(issued.headers['x-ratelimit-scope']).toBe('application')
    const token = issued.json().access_token as string
    const printers = (t: string) =>
      cloud.app.inject({ method: 'GET', url: '/api/v1/printers', headers: bearer(t) })
    for (let i = 0; i < 2; i++) {
      const res = await printers(token)
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-scope']).toBe('installation')
    }
    const refused = await printers(token)
    expectInjectedError(refused, 'rate_limited', expect.objectContaining({ scope: 'installation', limit: 2 }))
    expectRateLimitHeaders((name) => refused.headers[name] as string | undefined, 2, 'installation', WINDOW)
    // The customer's own client is counted against the account, untouched by the installation's burst.
    const own = await printers(await account.token())
    expect(own.statusCode).toBe(200)
    expect(own.headers['x-ratelimit-scope']).toBe('account')
  })
})

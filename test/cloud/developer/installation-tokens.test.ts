import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  bearer,
  createReceiptJob,
  expectInjectedError,
  field,
  ISO_DATE_TIME,
  UUID,
} from '../api/api-helpers.ts'
import { startTestCloud, type TestAccount, type TestCloud } from '../test-cloud.ts'
import { registerApplication, type TestApplication } from './applications.ts'

describe('installation access tokens (spec: Developer platform)', () => {
  let cloud: TestCloud
  let app: TestApplication
  let other: TestApplication
  let account: TestAccount
  let installationId: string

  beforeAll(async () => {
    cloud = await startTestCloud()
    app = await registerApplication(cloud.storage, cloud.config.publicUrl)
    other = await registerApplication(cloud.storage, cloud.config.publicUrl, { name: 'Other app' })
    account = await cloud.createAccount()
    installationId = (
      await cloud.storage.applications.install(app.appId, account.accountId, [
        'printers:read',
        'print_jobs:read',
      ])
    ).installation_id
  })
  afterAll(() => cloud?.close())

  const issue = async (as: TestApplication, installation: string, body?: unknown) =>
    cloud.app.inject({
      method: 'POST',
      url: `/developer-api/v1/app-installations/${installation}/access-tokens`,
      headers: bearer(await as.assertion()),
      ...(body !== undefined && { payload: body as object }),
    })

  it('issues a token with every approved permission when none are asked for', async () => {
    const res = await issue(app, installationId)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toStrictEqual({
      access_token: expect.stringMatching(/^ins_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: cloud.config.accessTokenTtlSeconds,
      expires_at: expect.stringMatching(ISO_DATE_TIME),
      permissions: ['printers:read', 'print_jobs:read'],
      installation_id: installationId,
      account_id: account.accountId,
    })
    expect(body.installation_id).toMatch(UUID)
    const printers = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/printers',
      headers: bearer(body.access_token),
    })
    expect(printers.statusCode).toBe(200)
    expect(
      printers
        .json()
        .data.map((p: { printer_id: string }) => p.printer_id)
        .sort(),
    ).toStrictEqual([account.receiptPrinterId, account.labelPrinterId].sort())
  })

  it('limits a token to the permissions asked for; the scope checks of /api/v1 apply', async () => {
    const res = await issue(app, installationId, { permissions: ['print_jobs:read'] })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().permissions).toStrictEqual(['print_jobs:read'])
    const token = res.json().access_token as string
    const printers = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/printers',
      headers: bearer(token),
    })
    expectInjectedError(printers, 'insufficient_scope', {
      required_scopes: ['printers:read'],
      missing_scopes: ['printers:read'],
    })
    const jobs = await cloud.app.inject({ method: 'GET', url: '/api/v1/print-jobs', headers: bearer(token) })
    expect(jobs.statusCode).toBe(200)
  })

  it('never grants more than the installation was approved for', async () => {
    const res = await issue(app, installationId, { permissions: ['printers:read', 'print_jobs:write'] })
    expectInjectedError(res, 'permissions_not_approved', {
      not_approved: ['print_jobs:write'],
      approved: ['printers:read', 'print_jobs:read'],
    })
    expectInjectedError(
      await issue(app, installationId, { permissions: ['admin'] }),
      'permissions_not_approved',
      {
        not_approved: ['admin'],
        approved: ['printers:read', 'print_jobs:read'],
      },
    )
    expectInjectedError(await issue(app, installationId, { permissions: [] }), 'permissions_not_approved', {
      not_approved: [],
      approved: ['printers:read', 'print_jobs:read'],
    })
  })

  it('lets several tokens coexist', async () => {
    const first = (await issue(app, installationId)).json().access_token as string
    const second = (await issue(app, installationId)).json().access_token as string
    expect(first).not.toBe(second)
    for (const token of [first, second]) {
      const res = await cloud.app.inject({ method: 'GET', url: '/api/v1/agents', headers: bearer(token) })
      expect(res.statusCode).toBe(200)
    }
  })

  it("answers 404 for another application's installation and for an unknown one", async () => {
    expectInjectedError(await issue(other, installationId), 'installation_not_found')
    expectInjectedError(await issue(app, '00000000-0000-4000-8000-000000000000'), 'installation_not_found')
  })

  it('answers 422 for an invalid installation id', async () => {
    expectInjectedError(await issue(app, 'not-a-uuid'), 'validation_failed', {
      fields: [field('installationId', 'params')],
    })
  })

  it("sees only its installation's account through the token", async () => {
    const stranger = await cloud.createAccount('Stranger')
    const foreignJob = await createReceiptJob(cloud, await stranger.token(), stranger.receiptPrinterId)
    const token = (await issue(app, installationId)).json().access_token as string
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs/${foreignJob.print_job_id}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'print_job_not_found')
  })

  it('refuses an inactive installation (422) and stops its tokens', async () => {
    const shop = await cloud.createAccount('Leaving shop')
    const installation = await cloud.storage.applications.install(app.appId, shop.accountId, [
      'printers:read',
    ])
    const token = (await issue(app, installation.installation_id)).json().access_token as string
    await cloud.storage.applications.deactivateInstallation(installation.installation_id)
    expectInjectedError(await issue(app, installation.installation_id), 'installation_inactive')
    const res = await cloud.app.inject({ method: 'GET', url: '/api/v1/printers', headers: bearer(token) })
    expectInjectedError(res, 'invalid_token')
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"')
  })

  it('refuses an expired installation token', async () => {
    const token = (await issue(app, installationId)).json().access_token as string
    const found = await cloud.storage.applications.findToken(
      (await import('../../../print-api/secrets.ts')).hashSecret(token),
      Date.now() + cloud.config.accessTokenTtlSeconds * 1000 + 1,
    )
    expect(found).toBeUndefined()
  })
})

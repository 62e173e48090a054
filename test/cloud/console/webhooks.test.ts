import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookSecretBox, webhookSecretKey } from '../../../cloud/webhooks/secret-box.ts'
import { WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS } from '../../../protocol/webhooks.ts'
import { type ConsoleClient, type ConsoleHarness, startConsoleHarness } from './console-harness.ts'
import { tableRows, textOf } from './page-text.ts'

const SECRET_SHOWN = /<code id="new-webhook-secret">(whsec_[A-Za-z0-9+/]{43}=)<\/code>/
const CLAIM = { limit: 50, perEndpoint: 10, leaseMs: 30_000 }

describe('console Webhooks pages', () => {
  let h: ConsoleHarness
  beforeAll(async () => {
    h = await startConsoleHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  const freshOwner = async () => {
    const account = await h.cloud.createAccount('Webhook shop')
    return { account, owner: await h.signIn('owner', account.accountId) }
  }

  /**
   * A form posted as a browser posts it (a field may repeat: one `event` per ticked box), with the CSRF token of
   * the form on `formPage`.
   */
  const postForm = async (
    client: ConsoleClient,
    formPage: string,
    action: string,
    fields: [string, string][],
  ): Promise<LightMyRequestResponse> => {
    const page = await client.get(formPage)
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
    const body = new URLSearchParams([['_csrf', csrf], ...fields])
    return h.cloud.app.inject({
      method: 'POST',
      url: action,
      remoteAddress: '127.0.0.1',
      headers: {
        cookie: [...client.cookies()].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: body.toString(),
    })
  }
  const createForm = (url: string, events: string[], description = ''): [string, string][] => [
    ['url', url],
    ['description', description],
    ...events.map((e): [string, string] => ['event', e]),
  ]
  const create = (client: ConsoleClient, url: string, events: string[], description = '') =>
    postForm(client, '/console/webhooks', '/console/webhooks', createForm(url, events, description))
  const endpointsOf = (accountId: string) => h.cloud.storage.webhooks.listEndpoints(accountId)
  const box = () => webhookSecretBox(webhookSecretKey(undefined, h.cloud.dataDir))

  it('adds an endpoint and shows its signing secret once, never on a later page', async () => {
    const { account, owner } = await freshOwner()
    const empty = await owner.get('/console/webhooks')
    expect(empty.statusCode).toBe(200)
    expect(empty.body).toContain('<a href="/console/webhooks" aria-current="page">Webhooks</a>')
    expect(empty.body).toContain('No webhook endpoints yet.')
    for (const type of WEBHOOK_EVENT_TYPES) expect(empty.body).toContain(`value="${type}"`)

    const res = await create(
      owner,
      'https://hooks.example.com/till',
      ['print_job.printed', 'printer.offline'],
      'Till',
    )
    expect(res.statusCode, res.body).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const secret = SECRET_SHOWN.exec(res.body)?.[1] ?? ''
    expect(secret).not.toBe('')
    expect(res.body).toContain('shown only on this page and never again')

    const [endpoint] = await endpointsOf(account.accountId)
    expect(endpoint).toMatchObject({
      url: 'https://hooks.example.com/till',
      event_types: ['print_job.printed', 'printer.offline'],
      description: 'Till',
      enabled: true,
    })
    // The secret is the endpoint's: a test delivery is signed with it.
    await h.cloud.storage.webhooks.enqueueTest(account.accountId, endpoint!.webhook_endpoint_id, Date.now())
    const claim = (await h.cloud.storage.webhooks.claimDue(Date.now() + 1000, CLAIM)).find(
      (c) => c.endpointId === endpoint!.webhook_endpoint_id,
    )
    expect(claim?.sealedSecrets.map((s) => box().open(s, endpoint!.webhook_endpoint_id))).toStrictEqual([
      secret,
    ])

    const list = await owner.get('/console/webhooks')
    expect(list.body).not.toContain(secret)
    expect(tableRows(list.body)).toEqual([
      [
        'https://hooks.example.com/till',
        'Enabled',
        'print_job.printed, printer.offline',
        'Till',
        expect.any(String),
      ],
    ])
    const page = await owner.get(`/console/webhooks/${endpoint!.webhook_endpoint_id}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).not.toContain(secret)
    expect(page.body).not.toContain('whsec_')
  })

  it('refuses what the API refuses, with the form kept and nothing stored', async () => {
    const { account, owner } = await freshOwner()
    const cases: [string, string[], string, string][] = [
      ['http://hooks.example.com/x', ['agent.online'], '', 'The URL must use https.'],
      ['https://127.0.0.1/x', ['agent.online'], '', 'The URL names a loopback address; it must be public.'],
      ['https://10.0.0.2/x', ['agent.online'], '', 'The URL names a private address; it must be public.'],
      [
        'https://169.254.169.254/x',
        ['agent.online'],
        '',
        'The URL names a link-local address; it must be public.',
      ],
      ['https://hooks.example.com/x', [], '', 'Choose at least one event.'],
      ['https://hooks.example.com/x', ['print_job.exploded'], '', 'Choose events from the list.'],
      [
        'https://hooks.example.com/x',
        ['agent.online'],
        'd'.repeat(WEBHOOK_LIMITS.descriptionMaxLength + 1),
        `The description must be at most ${WEBHOOK_LIMITS.descriptionMaxLength} characters.`,
      ],
    ]
    for (const [url, events, description, message] of cases) {
      const res = await create(owner, url, events, description)
      expect(res.statusCode, url).toBe(422)
      expect(res.body).toContain(`<p class="notice error" role="alert">${message}</p>`)
      expect(res.body).toContain(`value="${url}"`)
      expect(res.body).not.toContain('new-webhook-secret')
    }
    expect(await endpointsOf(account.accountId)).toStrictEqual([])
  })

  it(`says the account is full at ${WEBHOOK_LIMITS.endpointsPerAccount} endpoints`, async () => {
    const { account, owner } = await freshOwner()
    for (let i = 0; i < WEBHOOK_LIMITS.endpointsPerAccount; i++) {
      await h.cloud.storage.webhooks.createEndpoint(
        account.accountId,
        {
          endpointId: crypto.randomUUID(),
          url: `https://hooks.example.com/${i}`,
          eventTypes: ['agent.online'],
          description: null,
          sealedSecret: 'v1.x',
        },
        new Date().toISOString(),
      )
    }
    const page = await owner.get('/console/webhooks')
    expect(page.body).toContain('as many as it may; delete one to add another')
    expect(page.body).not.toContain('action="/console/webhooks"')
    const res = await create(owner, 'https://hooks.example.com/extra', ['agent.online'])
    expect(res.statusCode).toBe(409)
    expect(res.body).toContain('An account may have 20 webhook endpoints; delete one first.')
  })

  it('changes, pauses (saying why), enables, rotates, tests, sends again and deletes an endpoint', async () => {
    const { account, owner } = await freshOwner()
    await create(owner, 'https://hooks.example.com/a', ['agent.online'])
    const [endpoint] = await endpointsOf(account.accountId)
    const id = endpoint!.webhook_endpoint_id
    const page = `/console/webhooks/${id}`

    const saved = await postForm(
      owner,
      page,
      page,
      createForm('https://hooks.example.com/b', ['agent.offline', 'agent.online'], 'Back office'),
    )
    expect(saved.statusCode).toBe(303)
    expect(saved.headers.location).toBe(`${page}?done=saved`)
    expect((await endpointsOf(account.accountId))[0]).toMatchObject({
      url: 'https://hooks.example.com/b',
      event_types: ['agent.online', 'agent.offline'],
      description: 'Back office',
    })
    const badUrl = await postForm(owner, page, page, createForm('https://192.168.0.1/', ['agent.online']))
    expect(badUrl.statusCode).toBe(422)
    expect(badUrl.body).toContain('The URL names a private address; it must be public.')

    const paused = await postForm(owner, page, `${page}/enabled`, [['enabled', 'false']])
    expect(paused.headers.location).toBe(`${page}?done=paused`)
    const pausedPage = await owner.get(`${page}?done=paused`)
    expect(textOf(pausedPage.body)).toContain('State Paused Paused')
    expect(pausedPage.body).toContain('<button type="submit">Enable</button>')
    const refusedTest = await postForm(owner, page, `${page}/test`, [])
    expect(refusedTest.statusCode).toBe(409)
    expect(refusedTest.body).toContain('The webhook endpoint is paused; enable it first.')
    const enabled = await postForm(owner, page, `${page}/enabled`, [['enabled', 'true']])
    expect(enabled.headers.location).toBe(`${page}?done=enabled`)
    expect((await endpointsOf(account.accountId))[0]).toMatchObject({ enabled: true, disabled_reason: null })

    const rotated = await postForm(owner, page, `${page}/rotate-secret`, [])
    expect(rotated.statusCode).toBe(200)
    const secret = SECRET_SHOWN.exec(rotated.body)?.[1]
    expect(secret).toBeDefined()
    expect((await owner.get(page)).body).not.toContain(secret)

    const tested = await postForm(owner, page, `${page}/test`, [])
    expect(tested.headers.location).toBe(`${page}?done=test`)
    const withDelivery = await owner.get(`${page}?done=test`)
    expect(tableRows(withDelivery.body)).toEqual([
      ['webhook.test', expect.stringMatching(/^Pending/), 'Not tried yet', expect.any(String), 'Send again'],
    ])

    // An attempt as the worker records it, then "Send again".
    const claim = (await h.cloud.storage.webhooks.claimDue(Date.now() + 1000, CLAIM)).find(
      (c) => c.endpointId === id,
    )
    expect(claim).toBeDefined()
    const at = new Date().toISOString()
    await h.cloud.storage.webhooks.recordAttempt(
      claim!,
      { attempt: 1, attempted_at: at, duration_ms: 812, status_code: null, error: 'connection refused' },
      { state: 'failed', disableIfFailingSince: '2000-01-01T00:00:00.000Z', at },
    )
    const failedPage = await owner.get(page)
    const [row] = tableRows(failedPage.body)
    expect(row?.[1]).toBe('Failed')
    expect(row?.[2]).toMatch(/no answer, 812 ms — connection refused$/)
    const again = await postForm(owner, page, `${page}/deliveries/${claim!.deliveryId}/redeliver`, [])
    expect(again.headers.location).toBe(`${page}?done=redelivered`)
    const [delivery] = (await h.cloud.storage.webhooks.listDeliveries(account.accountId, id, 10))!.data
    expect(delivery).toMatchObject({ state: 'pending', attempts: 1 })

    const confirm = await owner.get(`${page}/delete`)
    expect(confirm.body).toContain('Delete the endpoint https://hooks.example.com/b?')
    const deleted = await postForm(owner, `${page}/delete`, `${page}/delete`, [])
    expect(deleted.headers.location).toBe('/console/webhooks?done=deleted')
    expect(await endpointsOf(account.accountId)).toStrictEqual([])
    expect((await owner.get(page)).statusCode).toBe(404)
  })

  it('shows why an endpoint was disabled for failing, and since when', async () => {
    const { account, owner } = await freshOwner()
    await create(owner, 'https://hooks.example.com/down', ['agent.online'])
    const [endpoint] = await endpointsOf(account.accountId)
    const id = endpoint!.webhook_endpoint_id
    await h.cloud.storage.webhooks.enqueueTest(account.accountId, id, Date.now())
    const claim = (await h.cloud.storage.webhooks.claimDue(Date.now() + 1000, CLAIM)).find(
      (c) => c.endpointId === id,
    )
    const at = new Date().toISOString()
    // Failing since before the bound: this failure disables it.
    await h.cloud.storage.webhooks.recordAttempt(
      claim!,
      { attempt: 1, attempted_at: at, duration_ms: 5, status_code: 503, error: 'the endpoint answered 503' },
      { state: 'failed', disableIfFailingSince: new Date(Date.now() + 60_000).toISOString(), at },
    )
    const after = (await endpointsOf(account.accountId))[0]
    expect(after).toMatchObject({ enabled: false, disabled_reason: 'failing' })
    const list = await owner.get('/console/webhooks')
    expect(tableRows(list.body)[0]?.[1]).toMatch(
      /^Disabled Disabled .+: every delivery failed since .+\. Fix the endpoint, then enable it\.$/,
    )
    const page = await owner.get(`/console/webhooks/${id}`)
    expect(page.body).toContain('<button type="submit">Enable</button>')
  })

  it("is the owner's: a member gets 403; another account's endpoint and delivery are not found", async () => {
    const { account, owner } = await freshOwner()
    await create(owner, 'https://hooks.example.com/mine', ['agent.online'])
    const [endpoint] = await endpointsOf(account.accountId)
    const id = endpoint!.webhook_endpoint_id
    const delivery = await h.cloud.storage.webhooks.enqueueTest(account.accountId, id, Date.now())

    const member = await h.signIn('member', account.accountId)
    const forbidden = await member.get('/console/webhooks')
    expect(forbidden.statusCode).toBe(403)
    expect(forbidden.body).toContain(
      'Only an owner of this account can manage API clients, webhooks and users',
    )
    expect((await member.get('/console')).body).not.toContain('href="/console/webhooks"')
    expect((await postForm(member, '/console', `/console/webhooks/${id}/delete`, [])).statusCode).toBe(403)

    const stranger = await h.signIn('owner', h.otherAccount.accountId)
    expect((await stranger.get(`/console/webhooks/${id}`)).statusCode).toBe(404)
    expect((await stranger.get('/console/webhooks')).body).not.toContain('hooks.example.com/mine')
    for (const action of ['', '/enabled', '/rotate-secret', '/test', '/delete']) {
      const res = await postForm(stranger, '/console/webhooks', `/console/webhooks/${id}${action}`, [
        ['enabled', 'false'],
      ])
      expect(res.statusCode, action).toBe(404)
    }
    const redeliver = `/console/webhooks/${id}/deliveries/${delivery!.webhook_delivery_id}/redeliver`
    expect((await postForm(stranger, '/console/webhooks', redeliver, [])).statusCode).toBe(404)
    // The owner's own endpoint with another of its endpoints' delivery id: not found either.
    await create(owner, 'https://hooks.example.com/second', ['agent.online'])
    const second = (await endpointsOf(account.accountId)).find((e) => e.url.endsWith('/second'))!
    const crossed = `/console/webhooks/${second.webhook_endpoint_id}/deliveries/${delivery!.webhook_delivery_id}/redeliver`
    expect((await postForm(owner, '/console/webhooks', crossed, [])).statusCode).toBe(404)
    expect(await endpointsOf(account.accountId)).toHaveLength(2)
    expect((await endpointsOf(account.accountId))[0]).toMatchObject({ enabled: true })
  })

  it('refuses a post without the CSRF token', async () => {
    const { account, owner } = await freshOwner()
    const res = await h.cloud.app.inject({
      method: 'POST',
      url: '/console/webhooks',
      remoteAddress: '127.0.0.1',
      headers: {
        cookie: [...owner.cookies()].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams(createForm('https://hooks.example.com/x', ['agent.online'])).toString(),
    })
    expect(res.statusCode).toBe(403)
    expect(await endpointsOf(account.accountId)).toStrictEqual([])
  })
})

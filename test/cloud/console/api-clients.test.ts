import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAccount } from '../test-cloud.ts'
import { type ConsoleClient, type ConsoleHarness, startConsoleHarness } from './console-harness.ts'

const CREATED =
  /<code id="new-client-id">([0-9a-f-]{36})<\/code>[\s\S]*<code id="new-client-secret">(cs_[\w-]{43})<\/code>/

/** The text of each cell of each body row of the page's table (tags removed). */
const tableRows = (body: string): string[][] =>
  [...(body.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '').matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) =>
      (cell[1] ?? '')
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  )

describe('console API clients pages', () => {
  let h: ConsoleHarness
  beforeAll(async () => {
    h = await startConsoleHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  /** An account of its own (with the harness's one CLI-made client, unnamed) and its owner signed in. */
  const freshAccount = async () => {
    const account = await h.cloud.createAccount('Fresh shop')
    return { account, owner: await h.signIn('owner', account.accountId) }
  }
  /**
   * The create form posted as a browser posts it: `scope` once per ticked box (the harness's post takes one
   * value a field), with the session's cookie and the CSRF token of the page's form.
   */
  const create = async (client: ConsoleClient, name: string, scopes: readonly string[]) => {
    const form = await client.get('/console/api-clients')
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? ''
    const body = new URLSearchParams({ _csrf: csrf, name })
    for (const scope of scopes) body.append('scope', scope)
    return h.cloud.app.inject({
      method: 'POST',
      url: '/console/api-clients',
      remoteAddress: '127.0.0.1',
      headers: {
        cookie: [...client.cookies()].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: body.toString(),
    })
  }
  const credentialsIn = (res: LightMyRequestResponse) => {
    const [, clientId = '', secret = ''] = CREATED.exec(res.body) ?? []
    return { clientId, secret }
  }
  const tokenFor = (clientId: string, secret: string, scope?: string) =>
    h.cloud.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
        ...(scope && { scope }),
      }).toString(),
    })
  const printers = (token: string) =>
    h.cloud.app.inject({
      method: 'GET',
      url: '/api/v1/printers',
      headers: { authorization: `Bearer ${token}` },
    })
  const clientsOf = (account: TestAccount) => h.cloud.storage.apiClients.listForAccount(account.accountId)

  it('create shows the secret once with a copy button and a warning; it gets a token with exactly the chosen scopes', async () => {
    const { account, owner } = await freshAccount()
    const res = await create(owner, 'Till app', ['printers:read', 'print_jobs:read'])
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const { clientId, secret } = credentialsIn(res)
    expect(secret).not.toBe('')
    expect(res.body).toContain(
      '<button type="button" data-copy="new-client-secret" hidden>Copy secret</button>',
    )
    expect(res.body).toContain(
      '<strong>Copy the secret now: it is shown only on this page and never again.</strong>',
    )
    expect(res.body).toContain('<h2 id="created-heading">Credentials of Till app</h2>')

    const stored = (await clientsOf(account)).find((c) => c.client_id === clientId)
    expect(stored).toMatchObject({
      name: 'Till app',
      scopes: ['printers:read', 'print_jobs:read'],
      revoked_at: null,
    })

    // Not in the list, not on a reload of the page.
    const list = await owner.get('/console/api-clients')
    expect(list.statusCode).toBe(200)
    expect(list.body).not.toContain(secret)
    expect(list.body).not.toContain('new-client-secret')
    expect(tableRows(list.body).find((row) => row[4] === clientId)).toEqual([
      'Till app',
      'Active Revoke',
      'printers:read, print_jobs:read',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/),
      clientId,
    ])

    const token = await tokenFor(clientId, secret)
    expect(token.statusCode).toBe(200)
    expect(token.json().scope.split(' ').sort()).toEqual(['print_jobs:read', 'printers:read'])
    expect((await printers(token.json().access_token)).statusCode).toBe(200)
    const wider = await tokenFor(clientId, secret, 'print_jobs:write')
    expect(wider.statusCode).toBe(400)
    expect(wider.json().error).toBe('invalid_scope')
  })

  it("lists the account's clients oldest first, never a secret or another account's client", async () => {
    const { account, owner } = await freshAccount()
    await create(owner, 'Warehouse <b>&</b>', ['print_jobs:write'])
    const list = await owner.get('/console/api-clients')
    expect(list.body).toContain(
      '<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Client id</th></tr></thead>',
    )
    const rows = tableRows(list.body)
    expect(rows.map((row) => [row[0], row[4], row[2]])).toEqual([
      [
        'Unnamed (made with the CLI)',
        account.clientId,
        'printers:read, documents:write, print_jobs:write, print_jobs:read, webhooks:write',
      ],
      ['Warehouse &lt;b&gt;&amp;&lt;/b&gt;', expect.any(String), 'print_jobs:write'],
    ])
    expect(list.body).not.toContain('<b>&</b>')
    expect(list.body).not.toContain(account.clientSecret)
    expect(list.body).not.toContain(h.otherAccount.clientId)
    expect(list.body).toContain('<a href="/console/api-clients" aria-current="page">API clients</a>')
    expect(list.body).toContain('<label for="client-name">Name</label>')
    expect(list.body).toContain(
      '<label for="scope-print_jobs-write"><input type="checkbox" id="scope-print_jobs-write" name="scope" value="print_jobs:write"> <code>print_jobs:write</code>: create and cancel print jobs</label>',
    )
  })

  it.each([
    ['an empty name', '  ', ['printers:read'], 'Enter a name of 1 to 100 characters.'],
    ['a 101-character name', 'x'.repeat(101), ['printers:read'], 'Enter a name of 1 to 100 characters.'],
    ['a NUL in the name', 'a\u0000b', ['printers:read'], 'Enter a name of 1 to 100 characters.'],
    ['no scope', 'Till', [], 'Choose at least one scope.'],
    ['an unknown scope', 'Till', ['printers:read', 'admin'], 'Choose scopes from the list.'],
  ])(
    'refuses %s with a 422 page that keeps the form, and creates nothing',
    async (_, name, scopes, message) => {
      const { account, owner } = await freshAccount()
      const res = await create(owner, name, scopes)
      expect(res.statusCode).toBe(422)
      expect(res.body).toContain(`<p class="notice error" role="alert">${message}</p>`)
      expect(res.body).not.toContain('new-client-secret')
      if (scopes.includes('printers:read')) expect(res.body).toContain('value="printers:read" checked>')
      expect(await clientsOf(account)).toHaveLength(1)
    },
  )

  it('revoke asks first, then its tokens are refused at once (401) and its secret gets no new ones', async () => {
    const { account, owner } = await freshAccount()
    const { clientId, secret } = credentialsIn(await create(owner, 'Old till', ['printers:read']))
    const token = (await tokenFor(clientId, secret)).json().access_token as string
    expect((await printers(token)).statusCode).toBe(200)

    const confirm = await owner.get(`/console/api-clients/${clientId}/revoke`)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain('<h1>Revoke Old till?</h1>')
    expect(confirm.body).toContain(`action="/console/api-clients/${clientId}/revoke"`)
    expect((await clientsOf(account)).find((c) => c.client_id === clientId)?.revoked_at).toBeNull()

    const revoked = await owner.post(`/console/api-clients/${clientId}/revoke`)
    expect(revoked.statusCode).toBe(303)
    expect(revoked.headers.location).toBe('/console/api-clients?done=revoked')
    const refused = await printers(token)
    expect(refused.statusCode).toBe(401)
    expect((await tokenFor(clientId, secret)).statusCode).toBe(401)
    const list = await owner.get('/console/api-clients?done=revoked')
    expect(list.body).toContain(
      '<p class="notice ok" role="status">The API client is revoked: its tokens no longer work and its secret gets no new ones.</p>',
    )
    const row = tableRows(list.body).find((r) => r[4] === clientId)
    expect(row?.[1]).toMatch(/^Revoked \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    // The harness's other client of the account still works.
    expect((await printers(await account.token(['printers:read']))).statusCode).toBe(200)
  })

  it("another account's client, an unknown or malformed id is a 404 page and revokes nothing", async () => {
    const { owner } = await freshAccount()
    const other = h.otherAccount
    for (const id of [other.clientId, '00000000-0000-4000-8000-000000000000', 'nope', '%00']) {
      expect((await owner.get(`/console/api-clients/${id}/revoke`)).statusCode).toBe(404)
      const post = await owner.post(`/console/api-clients/${id}/revoke`)
      expect(post.statusCode).toBe(404)
      expect(post.body).toContain('<h1>API client not found</h1>')
    }
    expect((await h.cloud.storage.apiClients.findById(other.clientId))?.revoked_at).toBeNull()
    expect((await printers(await other.token(['printers:read']))).statusCode).toBe(200)
  })

  it('a member gets 403 on every API clients route and nothing changes', async () => {
    const { account } = await freshAccount()
    const member = await h.signIn('member', account.accountId)
    const before = await clientsOf(account)
    expect((await member.get('/console/api-clients')).statusCode).toBe(403)
    expect((await member.get(`/console/api-clients/${account.clientId}/revoke`)).statusCode).toBe(403)
    const made = await create(member, 'Sneaky', ['printers:read'])
    expect(made.statusCode).toBe(403)
    expect(made.body).toContain('<h1>Not allowed</h1>')
    expect((await member.post(`/console/api-clients/${account.clientId}/revoke`)).statusCode).toBe(403)
    expect(await clientsOf(account)).toEqual(before)
    expect((await member.get('/console/printers')).body).not.toContain('href="/console/api-clients"')
  })

  it('a form without its CSRF token is refused and creates or revokes nothing', async () => {
    const { account, owner } = await freshAccount()
    expect(
      (await owner.post('/console/api-clients', { _csrf: 'forged', name: 'X', scope: 'printers:read' }))
        .statusCode,
    ).toBe(403)
    expect(
      (await owner.post(`/console/api-clients/${account.clientId}/revoke`, { _csrf: 'forged' })).statusCode,
    ).toBe(403)
    expect(await clientsOf(account)).toEqual([
      expect.objectContaining({ client_id: account.clientId, revoked_at: null }),
    ])
  })

  it('signed out, every route sends to sign-in and nothing changes', async () => {
    const anonymous = h.anonymous()
    const list = await anonymous.get('/console/api-clients')
    expect(list.statusCode).toBe(303)
    expect(list.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fapi-clients')
    const revoke = await anonymous.post(`/console/api-clients/${h.account.clientId}/revoke`)
    expect(revoke.statusCode).toBe(303)
    expect(revoke.headers.location).toBe('/console/sign-in')
    expect((await h.cloud.storage.apiClients.findById(h.account.clientId))?.revoked_at).toBeNull()
  })
})

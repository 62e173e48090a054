import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReceiptJob } from '../api/api-helpers.ts'
import { formBody, type IdPool, pathSegment, queryString } from '../property/request-arbitraries.ts'
import { ENGINES, storageEngine } from '../storage/engines.ts'
import { type ConsoleHarness, type ConsoleSession, startConsoleHarness } from './console-harness.ts'

// Property: whatever a browser (or anyone) sends to any console route, signed in or not, with or without a
// valid CSRF token, the answer is below 500, and every HTML answer carries the console's security headers.
// The routes come from the app's own route table, so a new console page is covered without touching this file.

const RUNS = Number(process.env.PROPERTY_RUNS ?? 20)
const TIMEOUT_MS = 60_000 + RUNS * 400

interface Route {
  method: string
  path: string
}

/** The console's routes, read from Fastify's printed route tree (a child's label continues its parent's path). */
function consoleRoutes(app: FastifyInstance): Route[] {
  const routes: Route[] = []
  const paths: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = (match[1] ?? '').length / 4
    const path = (paths[depth - 1] ?? '') + (match[2] ?? '')
    paths.length = depth
    paths[depth] = path
    if (!path.startsWith('/console')) continue
    for (const method of (match[3] ?? '').split(', ')) {
      if (method === 'GET' || method === 'POST') routes.push({ method, path })
    }
  }
  return routes
}

/** Field names the console's forms use, and some they do not. */
const FIELD_NAMES = {
  properties: Object.fromEntries(
    [
      'email',
      'password',
      'confirm',
      'next',
      'name',
      'scopes',
      'role',
      'status',
      'printer_id',
      'cursor',
      'confirmed',
      'url',
      'event',
      'description',
      'enabled',
      '_csrf',
    ].map((name) => [name, {}]),
  ),
}

describe.each(ENGINES)('no input to a console route produces a 5xx, on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let harness: ConsoleHarness
  let routes: Route[]
  let pool: IdPool
  let clients: { owner: ConsoleSession; member: ConsoleSession; anonymous: ConsoleSession }

  beforeAll(async () => {
    const { databaseUrl, remove } = await engineUnderTest.freshSettings()
    remove()
    harness = await startConsoleHarness({
      env: {
        // Failed sign-ins are many here; their throttling is tested in sign-in tests.
        CONSOLE_SIGN_IN_FAILURES_PER_IP: '1000000',
        CONSOLE_SIGN_IN_FAILURES_PER_EMAIL: '1000000',
        ...(databaseUrl && { DATABASE_URL: databaseUrl }),
      },
    })
    const { account, otherAccount, cloud } = harness
    const ownJob = await createReceiptJob(cloud, await account.token(), account.receiptPrinterId)
    const foreignJob = await createReceiptJob(
      cloud,
      await otherAccount.token(),
      otherAccount.receiptPrinterId,
    )
    pool = {
      printers: [account.receiptPrinterId, account.labelPrinterId],
      documents: [ownJob.document_id],
      jobs: [ownJob.print_job_id],
      agents: [account.agentId],
      installers: ['x'],
      foreign: [otherAccount.receiptPrinterId, otherAccount.agentId, foreignJob.print_job_id],
    }
    clients = {
      owner: await harness.signIn('owner'),
      member: await harness.signIn('member'),
      anonymous: harness.anonymous(),
    }
    routes = consoleRoutes(cloud.app)
  })
  afterAll(() => harness?.close())

  it('finds the console routes in the route table', () => {
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: 'GET', path: '/console' },
        { method: 'GET', path: '/console/sign-in' },
        { method: 'POST', path: '/console/sign-in' },
        { method: 'POST', path: '/console/sign-out' },
      ]),
    )
  })

  it(
    'answers every generated request below 500, with the security headers on HTML',
    async () => {
      const request = fc.record({
        route: fc.constantFrom(...routes),
        who: fc.constantFrom('owner', 'member', 'anonymous') as fc.Arbitrary<keyof typeof clients>,
        query: queryString([], pool),
        form: formBody(FIELD_NAMES, [
          fc.constantFrom(...pool.printers, ...pool.jobs, ...pool.foreign, 'owner', 'member', 'pending'),
        ]),
        keepCsrf: fc.boolean(),
      })
      const segmentFor = (name: string) => pathSegment(pool, name)
      await fc.assert(
        fc.asyncProperty(
          request.chain((r) =>
            fc
              .tuple(
                ...r.route.path
                  .split('/')
                  .map((part, i, parts) =>
                    part.startsWith(':')
                      ? segmentFor(`${parts[i - 1] ?? ''}/${part.slice(1)}`)
                      : fc.constant(part),
                  ),
              )
              .map((parts) => ({ ...r, url: `${parts.join('/')}${r.query}` })),
          ),
          async ({ route, who, url, form, keepCsrf }) => {
            const client = clients[who]
            let res: LightMyRequestResponse
            if (route.method === 'GET') res = await client.get(url)
            else {
              const fields = Object.fromEntries(new URLSearchParams(form))
              // Some posts carry the session's real token (reaching the handler), the rest whatever was generated.
              if (keepCsrf) delete fields._csrf
              else fields._csrf ??= ''
              res = await client.post(url, fields)
            }
            const summary = `${route.method} ${url} as ${who}: ${res.statusCode} ${res.body.slice(0, 300)}`
            expect(res.statusCode, summary).toBeLessThan(500)
            // A request that ended its own session (sign-out, a removed user) leaves the next ones signed out:
            // a fresh user takes its place, so that most requests keep reaching the signed-in handlers.
            const location = String(res.headers.location ?? '')
            if (who !== 'anonymous' && /^\/console\/sign-in(\?|$)/.test(location)) {
              clients[who] = await harness.signIn(who)
            }
            if (String(res.headers['content-type']).startsWith('text/html')) {
              expect(res.headers['content-security-policy'], summary).toContain("default-src 'none'")
              expect(res.headers['x-frame-options'], summary).toBe('DENY')
            }
          },
        ),
        { numRuns: RUNS * Math.max(1, routes.length) },
      )
    },
    TIMEOUT_MS * 3,
  )
})

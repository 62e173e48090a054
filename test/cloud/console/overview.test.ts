import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PrintJobStatus } from '../../../protocol/enums.ts'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import { storeJob } from '../storage/stored-jobs.ts'
import { LABEL_PRINTER, RECEIPT_PRINTER } from '../test-cloud.ts'
import { type ConsoleHarness, ManualClock, startConsoleHarness } from './console-harness.ts'
import { facts, partUnder, sectionOf, tableRows, textOf } from './page-text.ts'

const HOUR = 3600_000

/** A printer as a hub reports it, with its health. */
const reported = (
  key: string,
  name: string,
  health: HubPrinter['health'],
  capabilities = RECEIPT_PRINTER,
): HubPrinter => ({
  key,
  name,
  uri: `socket://127.0.0.1:91${key.length}0`,
  languages: capabilities.raw_languages,
  capabilities,
  health,
})

describe('console overview', () => {
  const clock = new ManualClock()
  let h: ConsoleHarness

  beforeAll(async () => {
    h = await startConsoleHarness({ consoleClock: clock })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('shows a member the account’s hubs and printers: online in words, health, last seen, version', async () => {
    const { storage } = h.cloud
    const account = await h.cloud.createAccount('Overview shop')
    // The account's first hub (online, printers Receipts online and Labels offline, neither reported health).
    await storage.agents.recordState(
      account.agentId,
      { version: '1.4.2', lan: null },
      '2026-11-24T10:00:00.000Z',
    )
    // A second hub that reported two printers at 09:00 and went offline at 11:00.
    const back = await storage.agents.insert({
      account_id: account.accountId,
      name: 'Back office',
      online: true,
    })
    await storage.printers.syncFromHub(
      account.accountId,
      back.agent_id,
      [
        reported('k', 'Kitchen', {
          state: 'paper_out',
          reasons: ['paper_end'],
          checked_at: '2026-11-24T09:00:00.000Z',
        }),
        reported(
          'shelf',
          'Shelf labels',
          { state: 'cover_open', reasons: [], checked_at: '2026-11-24T09:00:00.000Z' },
          LABEL_PRINTER,
        ),
      ],
      '2026-11-24T09:00:00.000Z',
    )
    await storage.hubPresence.markOffline(back.agent_id, null, '2026-11-24T11:00:00.000Z')
    await storage.hubPresence.printersLastSeen(back.agent_id, '2026-11-24T11:00:00.000Z')
    // Neither a revoked hub nor another account's hub is shown.
    const stolen = await storage.agents.insert({ account_id: account.accountId, name: 'Stolen hub' })
    await storage.agents.revoke(stolen.agent_id, new Date())
    await storage.agents.rename(h.otherAccount.accountId, h.otherAccount.agentId, 'Other shop hub')

    const member = await h.signIn('member', account.accountId)
    const res = await member.get('/console')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toContain('<a href="/console" aria-current="page">Overview</a>')

    const front = sectionOf(res.body, 'Front desk hub')
    expect(facts(front)).toEqual({
      Hub: 'Online',
      'Last seen': '2026-11-24 10:00:00 UTC',
      Version: '1.4.2',
      Printers: '2 printers',
    })
    expect(tableRows(front)).toEqual([
      ['Labels', 'Offline', 'Not reported yet', 'Not yet'],
      ['Receipts', 'Online', 'Not reported yet', 'Not yet'],
    ])
    expect(front).toContain(`<a href="/console/printers/${account.receiptPrinterId}">Receipts</a>`)

    const office = sectionOf(res.body, 'Back office')
    expect(facts(office)).toEqual({
      Hub: 'Offline',
      'Last seen': '2026-11-24 11:00:00 UTC',
      Version: 'Not reported yet',
      Printers: '2 printers',
    })
    expect(tableRows(office).sort()).toEqual([
      ['Kitchen', 'Offline', 'Out of paper (paper_end)', '2026-11-24 11:00:00 UTC'],
      ['Shelf labels', 'Offline', 'Cover open', '2026-11-24 11:00:00 UTC'],
    ])

    expect(textOf(res.body)).not.toContain('Stolen hub')
    expect(textOf(res.body)).not.toContain('Other shop hub')
    expect(() => sectionOf(res.body, 'Stolen hub')).toThrow()
  })

  it('counts the jobs of the last 24 hours by status, not older ones, and by the console’s clock', async () => {
    const account = await h.cloud.createAccount('Busy shop')
    const now = clock.now()
    const job = (status: PrintJobStatus, hoursAgo: number) =>
      storeJob(h.cloud.storage, account.accountId, account.receiptPrinterId, {
        status,
        created_at: new Date(now - hoursAgo * HOUR).toISOString(),
      })
    await job('printed', 1)
    await job('printed', 2)
    await job('failed', 3)
    await job('pending', 0.5)
    await job('printed', 25)
    await job('printed', 30)
    await job('cancelled', 48)
    // Another account's job of the last hour.
    await storeJob(h.cloud.storage, h.otherAccount.accountId, h.otherAccount.receiptPrinterId, {
      status: 'printed',
      created_at: new Date(now - HOUR).toISOString(),
    })

    const member = await h.signIn('member', account.accountId)
    const jobs = partUnder((await member.get('/console')).body, 'Jobs in the last 24 hours')
    expect(tableRows(jobs)).toEqual([
      ['Pending', '1'],
      ['Reserved by its hub', '0'],
      ['Printing', '0'],
      ['Printed', '2'],
      ['Failed', '1'],
      ['Cancelled', '0'],
    ])
    expect(textOf(/<tfoot>([\s\S]*?)<\/tfoot>/.exec(jobs)?.[1] ?? '')).toBe('All 4')

    // 21.5 hours later the failed job (then 24.5 hours old) is no longer of the last 24 hours; the others are.
    // The session has expired by then (12 hours at most): a new sign-in.
    clock.advance(21.5 * HOUR)
    const later = await h.signIn('member', account.accountId)
    const laterJobs = partUnder((await later.get('/console')).body, 'Jobs in the last 24 hours')
    expect(tableRows(laterJobs)).toEqual([
      ['Pending', '1'],
      ['Reserved by its hub', '0'],
      ['Printing', '0'],
      ['Printed', '2'],
      ['Failed', '0'],
      ['Cancelled', '0'],
    ])
    // 24.5 hours later, none.
    clock.advance(3 * HOUR)
    const latest = await h.signIn('member', account.accountId)
    expect(textOf(partUnder((await latest.get('/console')).body, 'Jobs in the last 24 hours'))).toBe(
      'Jobs in the last 24 hours No print jobs in the last 24 hours.',
    )
  })

  it('points an account without hubs to adding one', async () => {
    const empty = await h.cloud.storage.accounts.create('Empty shop')
    const owner = await h.signIn('owner', empty.account_id)
    const res = await owner.get('/console')
    expect(res.statusCode).toBe(200)
    expect(textOf(partUnder(res.body, 'Hubs and printers'))).toBe(
      'Hubs and printers This account has no hubs yet. A hub is the small computer beside your printers that connects them to this service. Add a hub',
    )
    expect(res.body).toContain('<a class="button" href="/console/hubs#add-hub">Add a hub</a>')
    expect(textOf(partUnder(res.body, 'Jobs in the last 24 hours'))).toBe(
      'Jobs in the last 24 hours No print jobs in the last 24 hours.',
    )
  })

  it('escapes a hub’s and a printer’s name', async () => {
    const account = await h.cloud.createAccount('Escaping shop')
    await h.cloud.storage.agents.rename(account.accountId, account.agentId, '<script>alert(1)</script>')
    const res = await (await h.signIn('member', account.accountId)).get('/console')
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(res.body).not.toContain('<script>alert')
  })

  it('sends someone signed out to sign in, and back here after', async () => {
    const res = await h.anonymous().get('/console')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/console/sign-in?next=%2Fconsole')
  })
})

import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '../../../protocol/agent.ts'
import type { PageOf } from '../../../protocol/pagination.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import type { Printer } from '../../../protocol/printer.ts'
import { insertWithinCapacity } from '../storage/stored-jobs.ts'
import { LABEL_PRINTER, RECEIPT_PRINTER, startTestCloud, type TestCloud } from '../test-cloud.ts'
import {
  type BareAccount,
  bareAccount,
  bearer,
  createReceiptJob,
  expectInjectedError,
  field,
  ISO_DATE_TIME,
  UUID,
} from './api-helpers.ts'

// GET /api/v1/agents, /api/v1/printers and /api/v1/print-jobs: shapes, newest first, cursor pagination.

let cloud: TestCloud
let shop: BareAccount
let token: string
beforeEach(async () => {
  cloud = await startTestCloud()
  shop = await bareAccount(cloud.storage)
  token = await shop.token()
})
afterEach(async () => {
  await cloud?.close()
})

async function get<T>(url: string): Promise<PageOf<T>> {
  const res = await cloud.app.inject({ method: 'GET', url, headers: bearer(token) })
  expect(res.statusCode, res.body).toBe(200)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  const body = res.json() as PageOf<T>
  expect(Object.keys(body).sort()).toEqual(['data', 'next_cursor'])
  return body
}

/** One after the other, so that they are listed in this order (newest last). */
async function insertPrinters(count: number, name = (i: number) => `Printer ${i}`): Promise<Printer[]> {
  const printers: Printer[] = []
  for (let i = 0; i < count; i++) {
    printers.push(
      await cloud.storage.printers.insert({
        account_id: shop.accountId,
        agent_id: shop.agentId,
        name: name(i + 1),
        capabilities: RECEIPT_PRINTER,
      }),
    )
  }
  return printers
}

/** Walks every page with `limit` and returns the page sizes and the ids in order. */
async function walk(url: string, limit: number, idOf: (item: Record<string, unknown>) => string) {
  const sizes: number[] = []
  const ids: string[] = []
  let cursor: string | null = null
  do {
    const sep = url.includes('?') ? '&' : '?'
    const page: PageOf<Record<string, unknown>> = await get(
      `${url}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
    )
    sizes.push(page.data.length)
    ids.push(...page.data.map(idOf))
    if (page.next_cursor !== null) expect(page.next_cursor).toBe(ids.at(-1))
    cursor = page.next_cursor
  } while (cursor !== null && sizes.length < 100)
  return { sizes, ids }
}

describe('GET /api/v1/agents', () => {
  it('lists the agents with their exact shape, newest first', async () => {
    const seen = new Date('2025-01-02T03:04:05.000Z').toISOString()
    const newer = await cloud.storage.agents.insert({
      account_id: shop.accountId,
      name: 'Back office hub',
      online: true,
      last_seen_at: seen,
      version: '1.4.2',
    })
    // Its LAN API on, and served where its latest state report says.
    await cloud.storage.agents.setLanApi(shop.accountId, newer.agent_id, true, seen)
    const lan = {
      port: 8443,
      addresses: ['192.168.1.9', 'fd00::9'],
      cert_sha256: 'e'.repeat(64),
      spki_sha256: `${'P'.repeat(43)}=`,
    }
    await cloud.storage.agents.recordState(newer.agent_id, { version: '1.4.2', lan }, seen)
    const page = await get<Agent>('/api/v1/agents')
    expect(page.next_cursor).toBeNull()
    expect(page.data).toStrictEqual([
      {
        agent_id: newer.agent_id,
        name: 'Back office hub',
        online: true,
        last_seen_at: seen,
        version: '1.4.2',
        created_at: expect.stringMatching(ISO_DATE_TIME),
        lan_api: {
          enabled: true,
          endpoint: {
            urls: ['https://192.168.1.9:8443/', 'https://[fd00::9]:8443/'],
            cert_sha256: lan.cert_sha256,
            spki_sha256: lan.spki_sha256,
          },
        },
      },
      {
        agent_id: shop.agentId,
        name: 'Hub',
        online: false,
        last_seen_at: null,
        version: null,
        created_at: expect.stringMatching(ISO_DATE_TIME),
        lan_api: { enabled: false, endpoint: null },
      },
    ])
    expect(page.data[0]!.agent_id).toMatch(UUID)
  })

  it('pages with a cursor: 6 agents at limit=4 → 4, 2', async () => {
    const agents = []
    for (let i = 0; i < 5; i++)
      agents.push(await cloud.storage.agents.insert({ account_id: shop.accountId, name: `Hub ${i}` }))
    const { sizes, ids } = await walk('/api/v1/agents', 4, (a) => a.agent_id as string)
    expect(sizes).toEqual([4, 2])
    expect(ids).toEqual([...agents.map((a) => a.agent_id).reverse(), shop.agentId])
  })

  it.each([
    ['0', 'limit=0'],
    ['101', 'limit=101'],
    ['abc', 'limit=abc'],
    ['2.5', 'limit=2.5'],
  ])('limit=%s → 422 validation_failed naming limit', async (_value, query) => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/agents?${query}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('limit', 'querystring')] })
  })

  it('an unknown cursor → 422 naming cursor', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/agents?cursor=${randomUUID()}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('cursor', 'querystring')] })
  })
})

describe('GET /api/v1/printers', () => {
  it('lists the printers with their exact shape, newest first', async () => {
    const seen = '2025-03-04T05:06:07.000Z'
    // A printer is online while its hub reports it and the hub is online.
    await cloud.storage.hubPresence.markOnline(shop.agentId, 'session-1', seen)
    const receipt = await cloud.storage.printers.insert({
      account_id: shop.accountId,
      agent_id: shop.agentId,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
      last_seen_at: seen,
    })
    const label = await cloud.storage.printers.insert({
      account_id: shop.accountId,
      agent_id: shop.agentId,
      name: 'Labels',
      capabilities: LABEL_PRINTER,
    })
    const page = await get<Printer>('/api/v1/printers')
    expect(page.next_cursor).toBeNull()
    expect(page.data).toStrictEqual([
      {
        printer_id: label.printer_id,
        agent_id: shop.agentId,
        name: 'Labels',
        languages: ['zpl', 'tspl', 'cpcl'],
        capabilities: LABEL_PRINTER,
        online: false,
        health: null,
        last_seen_at: null,
        created_at: expect.stringMatching(ISO_DATE_TIME),
      },
      {
        printer_id: receipt.printer_id,
        agent_id: shop.agentId,
        name: 'Receipts',
        languages: ['escpos'],
        capabilities: RECEIPT_PRINTER,
        online: true,
        health: null,
        last_seen_at: seen,
        created_at: expect.stringMatching(ISO_DATE_TIME),
      },
    ])
  })

  it('an account without printers gets an empty page', async () => {
    expect(await get<Printer>('/api/v1/printers')).toStrictEqual({ data: [], next_cursor: null })
  })

  it('pages 5 printers at limit=2 as 2, 2, 1: newest first, no duplicates, next_cursor null at the end', async () => {
    const printers = await insertPrinters(5)
    const { sizes, ids } = await walk('/api/v1/printers', 2, (p) => p.printer_id as string)
    expect(sizes).toEqual([2, 2, 1])
    expect(ids).toEqual(printers.map((p) => p.printer_id).reverse())
    expect(new Set(ids).size).toBe(5)
  })

  it('a page exactly filling the limit ends with next_cursor null when nothing is left', async () => {
    const printers = await insertPrinters(4)
    const { sizes, ids } = await walk('/api/v1/printers', 2, (p) => p.printer_id as string)
    expect(sizes).toEqual([2, 2])
    expect(ids).toEqual(printers.map((p) => p.printer_id).reverse())
  })

  it('defaults to 50 items: 55 printers → 50 and a cursor, then 5', async () => {
    const printers = await insertPrinters(55)
    const first = await get<Printer>('/api/v1/printers')
    expect(first.data).toHaveLength(50)
    expect(first.data.map((p) => p.printer_id)).toEqual(
      printers
        .map((p) => p.printer_id)
        .reverse()
        .slice(0, 50),
    )
    expect(first.next_cursor).toBe(first.data[49]!.printer_id)
    const second = await get<Printer>(`/api/v1/printers?cursor=${first.next_cursor}`)
    expect(second.data.map((p) => p.printer_id)).toEqual(
      printers
        .slice(0, 5)
        .map((p) => p.printer_id)
        .reverse(),
    )
    expect(second.next_cursor).toBeNull()
  })

  it('limit=100 is accepted and returns up to 100', async () => {
    await insertPrinters(3)
    const page = await get<Printer>('/api/v1/printers?limit=100')
    expect(page.data).toHaveLength(3)
    expect(page.next_cursor).toBeNull()
  })

  it("does not list another account's printers", async () => {
    await insertPrinters(2)
    const other = await bareAccount(cloud.storage, 'Other')
    await cloud.storage.printers.insert({
      account_id: other.accountId,
      agent_id: other.agentId,
      name: 'Theirs',
      capabilities: RECEIPT_PRINTER,
    })
    const page = await get<Printer>('/api/v1/printers')
    expect(page.data.map((p) => p.name)).toEqual(['Printer 2', 'Printer 1'])
  })

  it.each([
    ['0', 'limit=0'],
    ['101', 'limit=101'],
    ['abc', 'limit=abc'],
    ['-1', 'limit=-1'],
  ])('limit=%s → 422 validation_failed naming limit', async (_value, query) => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/printers?${query}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('limit', 'querystring')] })
  })

  it('an unknown cursor (a random uuid) → 422 naming cursor', async () => {
    await insertPrinters(3)
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/printers?cursor=${randomUUID()}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('cursor', 'querystring')] })
  })

  it('a cursor that is not a uuid → 422 naming cursor', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/printers?cursor=not-a-cursor',
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('cursor', 'querystring')] })
  })

  it("another account's printer id is no cursor → 422 naming cursor", async () => {
    const other = await bareAccount(cloud.storage, 'Other')
    const theirs = await cloud.storage.printers.insert({
      account_id: other.accountId,
      agent_id: other.agentId,
      name: 'Theirs',
      capabilities: RECEIPT_PRINTER,
    })
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/printers?cursor=${theirs.printer_id}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('cursor', 'querystring')] })
  })
})

describe('GET /api/v1/print-jobs', () => {
  let receipt: Printer
  let label: Printer
  /** In creation order: r1 (receipt), r2 (receipt), r3 (receipt), p1 (receipt, printed), f1 (label, failed). */
  let jobs: Record<'r1' | 'r2' | 'r3' | 'p1' | 'f1', PrintJob>

  beforeEach(async () => {
    receipt = await cloud.storage.printers.insert({
      account_id: shop.accountId,
      agent_id: shop.agentId,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
    })
    label = await cloud.storage.printers.insert({
      account_id: shop.accountId,
      agent_id: shop.agentId,
      name: 'Labels',
      capabilities: { ...LABEL_PRINTER, raw_languages: ['escpos', 'zpl'] },
    })
    const r1 = await createReceiptJob(cloud, token, receipt.printer_id)
    const r2 = await createReceiptJob(cloud, token, receipt.printer_id)
    const r3 = await createReceiptJob(cloud, token, receipt.printer_id)
    // Jobs further along are recorded straight through storage: no hub moves them in this issue.
    const later = async (base: PrintJob, printer: Printer, changes: Partial<PrintJob>): Promise<PrintJob> => {
      const job = { ...base, print_job_id: randomUUID(), printer_id: printer.printer_id, ...changes }
      expect(await insertWithinCapacity(cloud.storage, shop.accountId, job, 1000)).toBe(true)
      return job
    }
    const at = new Date().toISOString()
    const p1 = await later(r1, receipt, {
      status: 'printed',
      reserved_at: at,
      started_at: at,
      completed_at: at,
    })
    const f1 = await later(r1, label, {
      status: 'failed',
      reserved_at: at,
      started_at: at,
      completed_at: at,
      failure_reason: 'paper_out',
    })
    jobs = { r1, r2, r3, p1, f1 }
  })

  const ids = (page: PageOf<PrintJob>) => page.data.map((j) => j.print_job_id)
  const idsOf = (...names: (keyof typeof jobs)[]) => names.map((n) => jobs[n].print_job_id)

  it('lists every job newest first, each in the full print job shape', async () => {
    const page = await get<PrintJob>('/api/v1/print-jobs')
    expect(page.next_cursor).toBeNull()
    expect(page.data).toStrictEqual([jobs.f1, jobs.p1, jobs.r3, jobs.r2, jobs.r1])
  })

  it('each listed job equals GET /api/v1/print-jobs/{id}', async () => {
    const page = await get<PrintJob>('/api/v1/print-jobs')
    for (const job of page.data) {
      const res = await cloud.app.inject({
        method: 'GET',
        url: `/api/v1/print-jobs/${job.print_job_id}`,
        headers: bearer(token),
      })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toStrictEqual(job)
    }
  })

  it('filters by status', async () => {
    expect(ids(await get('/api/v1/print-jobs?status=pending'))).toEqual(idsOf('r3', 'r2', 'r1'))
    expect(ids(await get('/api/v1/print-jobs?status=printed'))).toEqual(idsOf('p1'))
    expect(ids(await get('/api/v1/print-jobs?status=failed'))).toEqual(idsOf('f1'))
    expect(await get('/api/v1/print-jobs?status=cancelled')).toStrictEqual({ data: [], next_cursor: null })
  })

  it('filters by printer_id, and by both', async () => {
    expect(ids(await get(`/api/v1/print-jobs?printer_id=${label.printer_id}`))).toEqual(idsOf('f1'))
    expect(ids(await get(`/api/v1/print-jobs?printer_id=${receipt.printer_id}`))).toEqual(
      idsOf('p1', 'r3', 'r2', 'r1'),
    )
    expect(ids(await get(`/api/v1/print-jobs?printer_id=${receipt.printer_id}&status=printed`))).toEqual(
      idsOf('p1'),
    )
    expect(ids(await get(`/api/v1/print-jobs?printer_id=${label.printer_id}&status=pending`))).toEqual([])
  })

  it('pages with a cursor: limit=2 → 2, 2, 1 in order', async () => {
    const { sizes, ids: all } = await walk('/api/v1/print-jobs', 2, (j) => j.print_job_id as string)
    expect(sizes).toEqual([2, 2, 1])
    expect(all).toEqual(idsOf('f1', 'p1', 'r3', 'r2', 'r1'))
  })

  it('pages a filtered list: status=pending, limit=2 → 2, 1', async () => {
    const { sizes, ids: all } = await walk(
      '/api/v1/print-jobs?status=pending',
      2,
      (j) => j.print_job_id as string,
    )
    expect(sizes).toEqual([2, 1])
    expect(all).toEqual(idsOf('r3', 'r2', 'r1'))
  })

  it.each([
    ['an unknown status', 'status=done', 'status'],
    ['a printer_id that is not a uuid', 'printer_id=printer-1', 'printer_id'],
    ['limit=0', 'limit=0', 'limit'],
    ['limit=101', 'limit=101', 'limit'],
    ['a cursor that is not a uuid', 'cursor=abc', 'cursor'],
  ])('%s → 422 validation_failed naming it', async (_what, query, name) => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs?${query}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field(name, 'querystring')] })
  })

  it('an unknown cursor → 422 naming cursor', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/v1/print-jobs?cursor=${randomUUID()}`,
      headers: bearer(token),
    })
    expectInjectedError(res, 'validation_failed', { fields: [field('cursor', 'querystring')] })
  })

  it('several bad parameters → one 422 naming each of them', async () => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/v1/print-jobs?status=done&limit=0',
      headers: bearer(token),
    })
    expect(res.statusCode).toBe(422)
    const body = res.json() as { details: { fields: { field: string }[] } }
    expect(body.details.fields.map((f) => f.field).sort()).toEqual(['limit', 'status'])
  })
})

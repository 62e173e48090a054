import { text } from 'node:stream/consumers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBlobStore } from '../../../cloud/storage/blob-store.ts'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import type { PrinterCapabilities } from '../../../protocol/printer.ts'
import type { TestAccount } from '../test-cloud.ts'
import {
  type ConsoleClient,
  type ConsoleHarness,
  ManualClock,
  startConsoleHarness,
} from './console-harness.ts'

/** The text of each cell of each body row of the page's table (tags removed, entities kept). */
const tableRows = (body: string): string[][] =>
  [...(body.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '').matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) =>
      (cell[1] ?? '').replace(/<[^>]+>/g, '').trim(),
    ),
  )

/** The `<dt>`/`<dd>` pairs of the page's fact lists, as text. */
const facts = (body: string): Record<string, string> =>
  Object.fromEntries(
    [...body.matchAll(/<dt>([^<]*)<\/dt><dd>([\s\S]*?)<\/dd>/g)].map((m) => [
      m[1],
      (m[2] ?? '').replace(/<[^>]+>/g, '').trim(),
    ]),
  )

const OFFICE_PRINTER: PrinterCapabilities = {
  document_formats: ['pdf'],
  raw_languages: [],
  dpi: [300, 600],
  media_width_mm: { min: 76, max: 216 },
  media_height_mm: { min: 127, max: 356 },
  color: true,
  duplex: true,
}

describe('console printers pages', () => {
  const clock = new ManualClock()
  let h: ConsoleHarness
  let owner: ConsoleClient
  const created: PrintJob[] = []

  beforeAll(async () => {
    h = await startConsoleHarness({
      consoleClock: clock,
      jobEvents: {
        offersNewJobs: false,
        jobCreated: async (job) => {
          created.push(job)
        },
        cancelRequested: async () => {},
      },
    })
    owner = await h.signIn('owner')
  })
  afterAll(async () => {
    await h?.close()
  })

  /** An account of its own with a member signed in (members may print test pages). */
  const freshAccount = async () => {
    const account = await h.cloud.createAccount('Fresh shop')
    return { account, client: await h.signIn('member', account.accountId) }
  }
  /** A second hub of the account, online, reporting one printer as a hub does (with its health). */
  const reportedPrinter = async (
    account: TestAccount,
    printer: Omit<HubPrinter, 'key' | 'uri' | 'languages'>,
  ) => {
    const hub = await h.cloud.storage.agents.insert({
      account_id: account.accountId,
      name: 'Back office hub',
      online: true,
    })
    await h.cloud.storage.printers.syncFromHub(
      account.accountId,
      hub.agent_id,
      [
        {
          ...printer,
          key: 'p1',
          uri: 'socket://127.0.0.1:9100',
          languages: printer.capabilities.raw_languages,
        },
      ],
      '2026-03-01T10:00:00.000Z',
    )
    const page = await h.cloud.storage.printers.list(account.accountId, 10)
    const id = page?.data.find((p) => p.agent_id === hub.agent_id)?.printer_id
    if (!id) throw new Error('the reported printer is not listed')
    return id
  }
  const jobsOf = async (account: TestAccount) =>
    (await h.cloud.storage.printJobs.list(account.accountId, 100, undefined, {}))?.data ?? []
  /** The bytes of the job's document as stored (what its hub will download). */
  const documentBytes = async (account: TestAccount, job: PrintJob): Promise<Buffer> => {
    const document = await h.cloud.storage.documents.findById(account.accountId, job.document_id)
    if (!document) throw new Error('no document')
    // A small RAW document is kept in its row (migration 24), a PDF in the blob store.
    const kept = (await h.cloud.storage.documents.findWithContent(account.accountId, job.document_id))
      ?.content
    if (kept) return kept
    const blob = await createBlobStore(h.cloud.config.dataDir).open(document.sha256)
    if (!blob) throw new Error('no blob')
    return Buffer.from(await text(blob.stream), 'latin1')
  }
  /** The test page posted: the job it redirected to (pending, on that printer, told to its hub). */
  const printTestPage = async (client: ConsoleClient, account: TestAccount, printerId: string) => {
    const before = created.length
    const res = await client.post(`/console/printers/${printerId}/test-page`)
    expect(res.statusCode).toBe(303)
    const jobs = await jobsOf(account)
    expect(jobs).toHaveLength(1)
    const job = jobs[0] as PrintJob
    expect(res.headers.location).toBe(`/console/jobs/${job.print_job_id}`)
    expect(job).toMatchObject({ printer_id: printerId, status: 'pending', copies: 1 })
    expect(created.slice(before).map((j) => j.print_job_id)).toEqual([job.print_job_id])
    return job
  }
  /** The time a slip shows: UTC to the second. */
  const sentAt = () => {
    const iso = new Date(clock.now()).toISOString()
    return `Sent ${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
  }

  it("lists the account's printers newest first: name, hub, connection, health, languages and formats", async () => {
    const { account, client } = await freshAccount()
    const jammed = await reportedPrinter(account, {
      name: 'Dock labels',
      capabilities: { ...OFFICE_PRINTER, document_formats: ['raw'], raw_languages: ['tspl'] },
      health: { state: 'paper_jam', reasons: ['media_jam'], checked_at: '2026-03-01T09:59:58.000Z' },
    })
    const res = await client.get('/console/printers')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toContain(
      '<thead><tr><th scope="col">Printer</th><th scope="col">Hub</th><th scope="col">Connection</th><th scope="col">Health</th><th scope="col">Languages</th><th scope="col">Formats</th></tr></thead>',
    )
    expect(tableRows(res.body)).toEqual([
      ['Dock labels', 'Back office hub', 'Online', 'Paper jam', 'TSPL', 'Raw'],
      ['Labels', 'Front desk hub', 'Offline', 'Not reported yet', 'ZPL, TSPL, CPCL', 'Raw, PDF'],
      ['Receipts', 'Front desk hub', 'Online', 'Not reported yet', 'ESC/POS', 'Raw, PDF'],
    ])
    expect(res.body).toContain(`<a href="/console/printers/${jammed}">Dock labels</a>`)
    expect(res.body).toContain('<span class="badge bad">Paper jam</span>')
    expect(res.body).toContain('<a href="/console/printers" aria-current="page">Printers</a>')
    for (const id of [h.otherAccount.receiptPrinterId, h.otherAccount.labelPrinterId])
      expect(res.body).not.toContain(id)
  })

  it('pages 50 printers at a time; a cursor that names no printer of the list is a 400 page', async () => {
    const { account, client } = await freshAccount()
    for (let i = 1; i <= 50; i++) {
      await h.cloud.storage.printers.insert({
        account_id: account.accountId,
        agent_id: account.agentId,
        name: `Till ${i}`,
        capabilities: OFFICE_PRINTER,
      })
    }
    const first = await client.get('/console/printers')
    const names = tableRows(first.body).map((row) => row[0])
    expect(names).toHaveLength(50)
    expect(names.slice(0, 2)).toEqual(['Till 50', 'Till 49'])
    const next = /<a href="(\/console\/printers\?cursor=[0-9a-f-]{36})">More printers<\/a>/.exec(
      first.body,
    )?.[1]
    expect(next).toBeDefined()
    const second = await client.get(next ?? '')
    expect(second.statusCode).toBe(200)
    expect(tableRows(second.body).map((row) => row[0])).toEqual(['Labels', 'Receipts'])
    expect(second.body).toContain('<a href="/console/printers">First printers</a>')
    expect(second.body).not.toContain('More printers')
    for (const cursor of [h.otherAccount.receiptPrinterId, 'nope', '%00']) {
      const stale = await client.get(`/console/printers?cursor=${cursor}`)
      expect(stale.statusCode).toBe(400)
      expect(stale.body).toContain('That page link does not name a printer of this list.')
      expect(stale.body).not.toContain('Receipts')
    }
  })

  it("a printer's page shows its capabilities and health", async () => {
    const { account, client } = await freshAccount()
    const id = await reportedPrinter(account, {
      name: 'Office laser',
      capabilities: OFFICE_PRINTER,
      health: { state: 'paper_low', reasons: ['paper_near_end'], checked_at: '2026-03-01T09:59:58.000Z' },
    })
    const res = await client.get(`/console/printers/${id}`)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<h1>Office laser</h1>')
    expect(facts(res.body)).toEqual({
      Connection: 'Online',
      Health: 'Paper low (paper_near_end)',
      'Health checked': '2026-03-01 09:59:58 UTC',
      'Last seen': '2026-03-01 10:00:00 UTC',
      Hub: 'Back office hub',
      'Printer id': id,
      'Document formats': 'PDF',
      'Raw languages': 'None',
      Resolutions: '300 dpi, 600 dpi',
      'Media width': '76–216 mm',
      'Media length': '127–356 mm',
      Colour: 'Yes',
      Duplex: 'Yes',
    })
    expect(res.body).toContain(`<a href="/console/jobs?printer_id=${id}">This printer's jobs</a>`)

    const receipt = await client.get(`/console/printers/${account.receiptPrinterId}`)
    expect(facts(receipt.body)).toMatchObject({
      Connection: 'Online',
      Health: 'Not reported yet',
      'Health checked': 'Not yet',
      'Raw languages': 'ESC/POS',
      Resolutions: '203 dpi',
      'Media width': '58–80 mm',
      'Media length': 'Continuous (a roll)',
      Colour: 'No',
      Duplex: 'No',
    })
    expect(receipt.body).not.toContain('The printer is offline')
    expect(receipt.body).toMatch(
      new RegExp(
        `<form class="inline" method="post" action="/console/printers/${account.receiptPrinterId}/test-page"><input type="hidden" name="_csrf" value="[^"]+"><button type="submit">Print test page</button></form>`,
      ),
    )
  })

  it('Print test page on a receipt printer: a pending job whose document is exactly the ESC/POS slip', async () => {
    const { account, client } = await freshAccount()
    clock.advance(1000)
    const job = await printTestPage(client, account, account.receiptPrinterId)
    expect(job).toMatchObject({ document_format: 'raw', document_raw_language: 'escpos' })
    expect((await documentBytes(account, job)).toString('latin1')).toBe(
      `\x1b@\x1ba\x01Printer: Receipts\n\n\x1d!\x11TEST PAGE\n\x1d!\x00\n${sentAt()}\n\n\n\x1dVB\x00`,
    )
    // The job's page follows it from there.
    const page = await client.get(`/console/jobs/${job.print_job_id}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<span class="badge" data-job-field="status">Pending</span>')
  })

  it('Print test page on a label printer: exactly the ZPL slip, its first language', async () => {
    const { account, client } = await freshAccount()
    clock.advance(1000)
    const job = await printTestPage(client, account, account.labelPrinterId)
    expect(job).toMatchObject({ document_format: 'raw', document_raw_language: 'zpl' })
    expect((await documentBytes(account, job)).toString('latin1')).toBe(
      `^XA^FO30,30^A0N,30,30^FDPrinter: Labels^FS^FO30,80^A0N,70,70^FDTEST PAGE^FS^FO30,170^A0N,25,25^FD${sentAt()}^FS^XZ\n`,
    )
  })

  it('TSPL and CPCL printers get their own slip; a name that is markup or commands is neither', async () => {
    const { account, client } = await freshAccount()
    const tspl = await reportedPrinter(account, {
      name: 'Dock "A"^XZ~é',
      capabilities: { ...OFFICE_PRINTER, document_formats: ['raw'], raw_languages: ['tspl'] },
      health: { state: 'ready', reasons: [], checked_at: '2026-03-01T09:59:58.000Z' },
    })
    const job = await printTestPage(client, account, tspl)
    expect((await documentBytes(account, job)).toString('latin1')).toBe(
      `CLS\r\nTEXT 30,30,"3",0,1,1,"Printer: Dock ?A??XZ??"\r\nTEXT 30,80,"4",0,2,2,"TEST PAGE"\r\nTEXT 30,170,"2",0,1,1,"${sentAt()}"\r\nPRINT 1\r\n`,
    )
    const { account: other, client: otherClient } = await freshAccount()
    const cpcl = await reportedPrinter(other, {
      name: 'Van printer',
      capabilities: { ...OFFICE_PRINTER, document_formats: ['raw', 'pdf'], raw_languages: ['cpcl'] },
      health: { state: 'ready', reasons: [], checked_at: '2026-03-01T09:59:58.000Z' },
    })
    const cpclJob = await printTestPage(otherClient, other, cpcl)
    expect((await documentBytes(other, cpclJob)).toString('latin1')).toBe(
      `! 0 200 200 260 1\r\nTEXT 4 0 30 30 Printer: Van printer\r\nTEXT 4 1 30 90 TEST PAGE\r\nTEXT 7 0 30 200 ${sentAt()}\r\nPRINT\r\n`,
    )
  })

  it('Print test page on a printer that takes PDF and no raw language: a one-page PDF', async () => {
    const { account, client } = await freshAccount()
    const id = await reportedPrinter(account, {
      name: 'Office (laser)',
      capabilities: OFFICE_PRINTER,
      health: { state: 'ready', reasons: [], checked_at: '2026-03-01T09:59:58.000Z' },
    })
    const job = await printTestPage(client, account, id)
    expect(job).toMatchObject({ document_format: 'pdf', document_raw_language: null })
    const pdf = (await documentBytes(account, job)).toString('latin1')
    expect(pdf.startsWith('%PDF-1.4\n')).toBe(true)
    expect(pdf).toContain('/Count 1 ')
    expect(pdf).toContain('(Print Hub test page) Tj')
    expect(pdf).toContain('(Printer: Office \\(laser\\)) Tj')
    expect(pdf).toContain(`(${sentAt()}) Tj`)
  })

  it('a printer that takes neither a raw language nor PDF has no test page button, and a post is a 409 that creates nothing', async () => {
    const { account, client } = await freshAccount()
    const odd = await h.cloud.storage.printers.insert({
      account_id: account.accountId,
      agent_id: account.agentId,
      name: 'Unknown model',
      capabilities: { ...OFFICE_PRINTER, document_formats: ['raw'], raw_languages: [] },
    })
    const page = await client.get(`/console/printers/${odd.printer_id}`)
    expect(page.body).not.toContain('test-page"')
    expect(page.body).toContain('<p>This printer takes no document the console can make a test page in.</p>')
    const post = await client.post(`/console/printers/${odd.printer_id}/test-page`)
    expect(post.statusCode).toBe(409)
    expect(post.body).toContain(
      '<p class="notice error" role="alert">This printer takes no document the console can make a test page in.</p>',
    )
    expect(await jobsOf(account)).toEqual([])
  })

  it("another account's printer, an unknown or malformed id is a 404 page and prints nothing", async () => {
    const other = h.otherAccount
    for (const id of [other.receiptPrinterId, '00000000-0000-4000-8000-000000000000', 'not-an-id', '%00']) {
      const page = await owner.get(`/console/printers/${id}`)
      expect(page.statusCode).toBe(404)
      expect(page.body).toContain('<h1>Printer not found</h1>')
      expect(page.body).not.toContain('Receipts')
      const post = await owner.post(`/console/printers/${id}/test-page`)
      expect(post.statusCode).toBe(404)
    }
    expect(await jobsOf(other)).toEqual([])
    expect(await jobsOf(h.account)).toEqual([])
  })

  it('a removed printer has no page and cannot get a test page', async () => {
    const { account, client } = await freshAccount()
    const page = await client.get(`/console/printers/${account.labelPrinterId}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(
      '<p>The printer is offline: a test page waits as pending until its hub reports it again, or until the job expires.</p>',
    )
    const removal = await h.cloud.storage.printers.remove(account.labelPrinterId, new Date().toISOString())
    expect(removal.removed).toBe(true)
    expect((await client.get(`/console/printers/${account.labelPrinterId}`)).statusCode).toBe(404)
    const post = await client.post(`/console/printers/${account.labelPrinterId}/test-page`)
    expect(post.statusCode).toBe(404)
    expect(await jobsOf(account)).toEqual([])
    expect(tableRows((await client.get('/console/printers')).body).map((row) => row[0])).toEqual(['Receipts'])
  })

  it('a test page without the CSRF field is refused and creates nothing', async () => {
    const { account, client } = await freshAccount()
    const res = await client.post(`/console/printers/${account.receiptPrinterId}/test-page`, {
      _csrf: 'forged',
    })
    expect(res.statusCode).toBe(403)
    expect(await jobsOf(account)).toEqual([])
  })

  it('a full print queue is the API’s refusal (409 print_queue_full), shown on the printer’s page', async () => {
    const small = await startConsoleHarness({ env: { PRINT_QUEUE_CAPACITY: '1' } })
    try {
      const client = await small.signIn('member')
      const printer = `/console/printers/${small.account.receiptPrinterId}`
      expect((await client.post(`${printer}/test-page`)).statusCode).toBe(303)
      const refused = await client.post(`${printer}/test-page`)
      expect(refused.statusCode).toBe(409)
      expect(refused.body).toContain(
        '<p class="notice error" role="alert">print_queue_full: The account already has 1 unfinished print jobs.</p>',
      )
      expect(refused.body).toContain('<h1>Receipts</h1>')
      expect(
        (await small.cloud.storage.printJobs.list(small.account.accountId, 10, undefined, {}))?.data,
      ).toHaveLength(1)
    } finally {
      await small.close()
    }
  })

  it('escapes printer and hub names', async () => {
    const { account, client } = await freshAccount()
    const id = await reportedPrinter(account, {
      name: '<script>alert(1)</script> & "Co"',
      capabilities: OFFICE_PRINTER,
      health: { state: 'ready', reasons: ['<b>'], checked_at: '2026-03-01T09:59:58.000Z' },
    })
    for (const path of ['/console/printers', `/console/printers/${id}`]) {
      const res = await client.get(path)
      expect(res.body).not.toContain('<script>alert')
      expect(res.body).not.toContain('<b>')
      expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;')
    }
  })

  it('signed out, every printers route sends to sign-in', async () => {
    const anonymous = h.anonymous()
    const list = await anonymous.get('/console/printers')
    expect(list.statusCode).toBe(303)
    expect(list.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fprinters')
    expect((await anonymous.get(`/console/printers/${h.account.receiptPrinterId}`)).statusCode).toBe(303)
  })
})

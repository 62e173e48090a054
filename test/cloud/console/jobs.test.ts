import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JobState } from '../../../cloud/console/job-view.ts'
import { JobLifecycle } from '../../../cloud/print-jobs/lifecycle.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { ESCPOS_RECEIPT, type TestAccount } from '../test-cloud.ts'
import { type ConsoleClient, type ConsoleHarness, startConsoleHarness } from './console-harness.ts'

const ZPL_LABEL = Buffer.from('^XA^FO20,20^A0N,30,30^FDHello^FS^XZ', 'ascii')

/** The job ids linked from a jobs page, in the order of its table. */
const jobIdsIn = (body: string) =>
  [...body.matchAll(/<a href="\/console\/jobs\/([0-9a-f-]{36})">/g)].map((match) => match[1])

/** The href of a pager link, unescaped. */
const pagerLink = (body: string, label: 'Older jobs' | 'Newest jobs') =>
  body.match(new RegExp(`<a href="(/console/jobs[^"]*)">${label}</a>`))?.[1]?.replaceAll('&amp;', '&')

/** The names of the elements a job page marks for the live update. */
const liveFieldsIn = (body: string) =>
  [...body.matchAll(/data-job-field="([a-z_]+)"/g)].map((match) => match[1]).sort()

describe('console jobs pages', () => {
  let h: ConsoleHarness
  let owner: ConsoleClient
  let lifecycle: JobLifecycle
  const tokens = new Map<string, string>()

  beforeAll(async () => {
    h = await startConsoleHarness()
    owner = await h.signIn('owner')
    lifecycle = new JobLifecycle(h.cloud.storage.printJobs)
  })
  afterAll(async () => {
    await h?.close()
  })

  /** A job created through the API (POST /api/v1/print-jobs/from-base64) on the account's receipt or label printer. */
  const createJob = async (
    account: TestAccount,
    printer: 'receipt' | 'label' = 'receipt',
  ): Promise<PrintJob> => {
    let token = tokens.get(account.accountId)
    if (!token) {
      token = await account.token()
      tokens.set(account.accountId, token)
    }
    const res = await h.cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${token}` },
      payload:
        printer === 'receipt'
          ? {
              printer_id: account.receiptPrinterId,
              document_base64: ESCPOS_RECEIPT.toString('base64'),
              document_format: 'raw',
              document_raw_language: 'escpos',
            }
          : {
              printer_id: account.labelPrinterId,
              document_base64: ZPL_LABEL.toString('base64'),
              document_format: 'raw',
              document_raw_language: 'zpl',
            },
    })
    expect(res.statusCode).toBe(201)
    return res.json() as PrintJob
  }
  /** The API's answer to a cancel of the job, for comparing with the console's. */
  const apiCancel = async (account: TestAccount, id: string) => {
    const res = await h.cloud.app.inject({
      method: 'POST',
      url: `/api/v1/print-jobs/${id}/cancel`,
      headers: { authorization: `Bearer ${tokens.get(account.accountId) ?? (await account.token())}` },
    })
    return { status: res.statusCode, body: res.json() as Record<string, unknown> }
  }
  const stored = (account: TestAccount, id: string) =>
    h.cloud.storage.printJobs.findDetails(account.accountId, id)
  /** The job driven as its hub would (offer, acknowledgement, printing, printed), at `at`. */
  const printed = async (id: string, at: string) => {
    expect(await lifecycle.offered(id, new Date(at))).toBe(true)
    expect(await lifecycle.hubReported(id, 'printed', at)).toBe(true)
  }
  /** An account of its own with an owner signed in, for tests that count its jobs. */
  const freshAccount = async () => {
    const account = await h.cloud.createAccount('Fresh shop')
    return { account, client: await h.signIn('owner', account.accountId) }
  }
  const state = async (client: ConsoleClient, id: string) => {
    const res = await client.get(`/console/jobs/${id}/state`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    return res.json() as JobState
  }

  it('lists the account’s jobs newest first: created, printer, status in words, document and a link', async () => {
    const { account, client } = await freshAccount()
    const first = await createJob(account, 'receipt')
    const second = await createJob(account, 'label')
    const third = await createJob(account, 'receipt')
    await printed(first.print_job_id, new Date().toISOString())
    const elsewhere = await createJob(h.otherAccount)

    const res = await client.get('/console/jobs')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(jobIdsIn(res.body)).toEqual([third.print_job_id, second.print_job_id, first.print_job_id])
    expect(res.body).not.toContain(elsewhere.print_job_id)
    expect(res.body).toContain(
      '<th scope="col">Job</th><th scope="col">Created (UTC)</th><th scope="col">Printer</th><th scope="col">Status</th><th scope="col">Document</th>',
    )
    const rowOf = (id: string) =>
      res.body.split('<tr>').find((row) => row.includes(`/console/jobs/${id}"`)) ?? ''
    const created = first.created_at
    expect(rowOf(first.print_job_id)).toContain(
      `<td><time datetime="${created}">${created.slice(0, 10)} ${created.slice(11, 19)}</time></td>`,
    )
    expect(rowOf(first.print_job_id)).toContain('<td>Receipts</td>')
    expect(rowOf(first.print_job_id)).toContain('<span class="badge ok">Printed</span>')
    expect(rowOf(first.print_job_id)).toContain('<td>RAW (ESC/POS)</td>')
    expect(rowOf(second.print_job_id)).toContain('<td>Labels</td>')
    expect(rowOf(second.print_job_id)).toContain('<span class="badge">Pending</span>')
    expect(rowOf(second.print_job_id)).toContain('<td>RAW (ZPL)</td>')
    expect(rowOf(third.print_job_id)).toContain(
      `<a href="/console/jobs/${third.print_job_id}">Job <span class="mono">${third.print_job_id.slice(0, 8)}</span></a>`,
    )
    expect(res.body).toContain('<a href="/console/jobs" aria-current="page">Jobs</a>')
  })

  it('says so when the account has no jobs', async () => {
    const { client } = await freshAccount()
    const res = await client.get('/console/jobs')
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<p>No print jobs yet.</p>')
    expect(jobIdsIn(res.body)).toEqual([])
  })

  it('filters by status and by printer with labelled selects that keep the choice', async () => {
    const { account, client } = await freshAccount()
    const receiptPending = await createJob(account, 'receipt')
    const receiptPrinted = await createJob(account, 'receipt')
    const labelPrinted = await createJob(account, 'label')
    const now = new Date().toISOString()
    await printed(receiptPrinted.print_job_id, now)
    await printed(labelPrinted.print_job_id, now)

    const byStatus = await client.get('/console/jobs?status=printed')
    expect(byStatus.statusCode).toBe(200)
    expect(jobIdsIn(byStatus.body)).toEqual([labelPrinted.print_job_id, receiptPrinted.print_job_id])
    expect(byStatus.body).toContain('<label for="job-status">Status</label>')
    expect(byStatus.body).toContain('<option value="printed" selected>Printed</option>')
    expect(byStatus.body).toContain('<label for="job-printer">Printer</label>')

    const byPrinter = await client.get(`/console/jobs?printer_id=${account.receiptPrinterId}`)
    expect(jobIdsIn(byPrinter.body)).toEqual([receiptPrinted.print_job_id, receiptPending.print_job_id])
    expect(byPrinter.body).toContain(`<option value="${account.receiptPrinterId}" selected>Receipts</option>`)

    const both = await client.get(
      `/console/jobs?status=pending&printer_id=${account.receiptPrinterId}&cursor=`,
    )
    expect(jobIdsIn(both.body)).toEqual([receiptPending.print_job_id])

    const none = await client.get(`/console/jobs?status=cancelled`)
    expect(none.statusCode).toBe(200)
    expect(none.body).toContain('<p>No jobs match these filters.</p>')

    // Another account's printer filters to nothing and is not named.
    const foreign = await client.get(`/console/jobs?printer_id=${h.otherAccount.receiptPrinterId}`)
    expect(foreign.statusCode).toBe(200)
    expect(jobIdsIn(foreign.body)).toEqual([])
    expect(foreign.body).toContain(`>Printer ${h.otherAccount.receiptPrinterId.slice(0, 8)}</option>`)
  })

  it('answers a filter or page link that names nothing with a 400 page that says why, never a 500', async () => {
    const cases: [string, string][] = [
      ['status=lost', 'That status is not one of the job statuses. Choose one from the list.'],
      [
        'status=printed&status=failed',
        'That status is not one of the job statuses. Choose one from the list.',
      ],
      ['printer_id=receipts', 'That printer is not a printer id. Choose one from the list.'],
      ['cursor=abc', 'That page link does not name a job of this list. Start again from the newest jobs.'],
      [
        `cursor=${randomUUID()}`,
        'That page link does not name a job of this list. Start again from the newest jobs.',
      ],
    ]
    for (const [query, message] of cases) {
      const res = await owner.get(`/console/jobs?${query}`)
      expect(res.statusCode, query).toBe(400)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.body).toContain(`<p class="notice error" role="alert">${message}</p>`)
      expect(res.body).not.toContain('lost')
    }
  })

  it('pages through the jobs with the filters kept in the pager links', async () => {
    const { account, client } = await freshAccount()
    const created: string[] = []
    for (let i = 0; i < 27; i++) created.push((await createJob(account)).print_job_id)
    await createJob(account, 'label')
    const newestFirst = created.reverse()

    const first = await client.get(`/console/jobs?printer_id=${account.receiptPrinterId}`)
    expect(jobIdsIn(first.body)).toEqual(newestFirst.slice(0, 25))
    expect(pagerLink(first.body, 'Newest jobs')).toBeUndefined()
    const older = pagerLink(first.body, 'Older jobs')
    expect(older).toBe(`/console/jobs?printer_id=${account.receiptPrinterId}&cursor=${newestFirst[24]}`)

    const second = await client.get(older ?? '')
    expect(second.statusCode).toBe(200)
    expect(jobIdsIn(second.body)).toEqual(newestFirst.slice(25))
    expect(pagerLink(second.body, 'Older jobs')).toBeUndefined()
    expect(pagerLink(second.body, 'Newest jobs')).toBe(`/console/jobs?printer_id=${account.receiptPrinterId}`)

    const byStatus = await client.get('/console/jobs?status=pending')
    expect(jobIdsIn(byStatus.body)).toHaveLength(25)
    expect(pagerLink(byStatus.body, 'Older jobs')).toMatch(
      /^\/console\/jobs\?status=pending&cursor=[0-9a-f-]{36}$/,
    )
  })

  it('shows a job’s facts and its timeline as it goes through its states, live from …/state', async () => {
    const { account, client } = await freshAccount()
    const job = await createJob(account)
    const id = job.print_job_id

    const page = await client.get(`/console/jobs/${id}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`<h1>Print job <span class="mono">${id.slice(0, 8)}</span></h1>`)
    expect(page.body).toContain(`<div data-job-state="/console/jobs/${id}/state" data-job-final="false">`)
    expect(page.body).toContain(
      '<dt>Status</dt><dd aria-live="polite"><span class="badge" data-job-field="status">Pending</span></dd>',
    )
    expect(page.body).toContain(`<a href="/console/printers/${account.receiptPrinterId}">Receipts</a>`)
    expect(page.body).toContain(
      '<dd>RAW (ESC/POS) <span class="muted">(application/vnd.epson-escpos)</span></dd>',
    )
    const created = `${job.created_at.slice(0, 10)} ${job.created_at.slice(11, 19)} UTC`
    expect(page.body).toContain(
      `<li>Created: <time data-job-field="created_at" datetime="${job.created_at}">${created}</time></li>`,
    )
    expect(page.body).toContain(
      '<li>Reserved by its hub: <time data-job-field="reserved_at">Not yet</time></li>',
    )
    expect(page.body).toContain(
      `<form class="inline" method="post" action="/console/jobs/${id}/cancel" data-job-cancel>`,
    )
    const initial = await state(client, id)
    // Every element the page marks is one the state endpoint gives, and the other way round.
    expect(liveFieldsIn(page.body)).toEqual(Object.keys(initial.text).sort())
    expect(initial).toMatchObject({ status: 'pending', final: false, cancellable: true })

    const reservedAt = '2026-11-24T10:00:01.000Z'
    expect(await lifecycle.offered(id, new Date(reservedAt))).toBe(true)
    expect(await lifecycle.apply(id, 'reserve', { reserved_at: reservedAt })).toBe(true)
    expect(await lifecycle.apply(id, 'wait', { waiting_reason: 'paper_out' })).toBe(true)
    expect(await state(client, id)).toMatchObject({
      status: 'reserved',
      final: false,
      cancellable: true,
      badge: 'warn',
      text: {
        status: 'Reserved by its hub',
        waiting: 'The printer is out of paper',
        reserved_at: '2026-11-24 10:00:01 UTC',
        started_at: 'Not yet',
      },
      times: { reserved_at: reservedAt, started_at: null },
    })

    const startedAt = '2026-11-24T10:00:02.000Z'
    expect(await lifecycle.hubReported(id, 'printing', startedAt)).toBe(true)
    expect(await state(client, id)).toMatchObject({
      status: 'printing',
      cancellable: false,
      text: { status: 'Printing', waiting: 'Not waiting', started_at: '2026-11-24 10:00:02 UTC' },
      times: { reserved_at: reservedAt, started_at: startedAt },
    })

    const failedAt = '2026-11-24T10:00:03.000Z'
    expect(
      await lifecycle.hubReported(id, 'failed', failedAt, {
        reason: 'printer_error',
        detail: 'Head too hot',
      }),
    ).toBe(true)
    const final = await state(client, id)
    expect(final).toMatchObject({
      status: 'failed',
      final: true,
      cancellable: false,
      badge: 'bad',
      text: {
        status: 'Failed',
        failure: 'printer_error',
        failure_detail: 'Head too hot',
        completed_at: '2026-11-24 10:00:03 UTC',
        cancel: 'None',
      },
    })

    const after = await client.get(`/console/jobs/${id}`)
    expect(after.body).toContain(`data-job-final="true"`)
    expect(after.body).toContain('<span class="badge bad" data-job-field="status">Failed</span>')
    expect(after.body).toContain('<dt>Failure reason</dt><dd data-job-field="failure">printer_error</dd>')
    expect(after.body).toContain(
      '<dt>Failure detail</dt><dd data-job-field="failure_detail">Head too hot</dd>',
    )
    expect(after.body).toContain(
      `<li>Printing started: <time data-job-field="started_at" datetime="${startedAt}">2026-11-24 10:00:02 UTC</time></li>`,
    )
    expect(after.body).toContain(
      `<li>Completed: <time data-job-field="completed_at" datetime="${failedAt}">2026-11-24 10:00:03 UTC</time></li>`,
    )
    expect(after.body).not.toContain('data-job-cancel')
  })

  it('cancels a pending job as the API does: cancelled at once, with a notice', async () => {
    const { account, client } = await freshAccount()
    const job = await createJob(account)
    const res = await client.post(`/console/jobs/${job.print_job_id}/cancel`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/console/jobs/${job.print_job_id}?cancel=cancelled`)
    expect(await stored(account, job.print_job_id)).toMatchObject({
      status: 'cancelled',
      completed_at: expect.any(String),
    })
    const page = await client.get(res.headers.location as string)
    expect(page.body).toContain(
      '<p class="notice ok" role="status">The job is cancelled: none of it reached the printer.</p>',
    )
    expect(page.body).toContain('<span class="badge" data-job-field="status">Cancelled</span>')

    // The API, asked the same of a job in the same state, gives the same outcome.
    const twin = await createJob(account)
    expect(await apiCancel(account, twin.print_job_id)).toMatchObject({
      status: 200,
      body: { status: 'cancelled' },
    })
  })

  it('records a cancel of a job its hub may hold as requested (the API’s 202), and the page says so', async () => {
    const { account, client } = await freshAccount()
    const job = await createJob(account)
    expect(await lifecycle.offered(job.print_job_id)).toBe(true)
    const res = await client.post(`/console/jobs/${job.print_job_id}/cancel`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/console/jobs/${job.print_job_id}?cancel=requested`)
    expect(await stored(account, job.print_job_id)).toMatchObject({
      status: 'pending',
      cancel_requested_at: expect.any(String),
      cancel_reason: 'cancelled',
    })
    const page = await client.get(res.headers.location as string)
    expect(page.body).toContain('<p class="notice ok" role="status">Cancel requested: ')
    expect(page.body).toContain(
      '<dt>Cancel requested</dt><dd data-job-field="cancel">Cancelled from the API or the console</dd>',
    )
    expect((await state(client, job.print_job_id)).times.cancel_requested_at).toEqual(expect.any(String))
    // The hub confirms it dropped the job: the page's state ends cancelled, final, with nothing left to cancel.
    expect(await lifecycle.hubReported(job.print_job_id, 'cancelled', '2026-11-24T10:00:05.000Z')).toBe(true)
    expect(await state(client, job.print_job_id)).toMatchObject({
      status: 'cancelled',
      final: true,
      cancellable: false,
      text: { status: 'Cancelled', completed_at: '2026-11-24 10:00:05 UTC' },
    })

    const twin = await createJob(account)
    expect(await lifecycle.offered(twin.print_job_id)).toBe(true)
    expect((await apiCancel(account, twin.print_job_id)).status).toBe(202)
  })

  it('refuses to cancel a final job with the API’s error code and message', async () => {
    const { account, client } = await freshAccount()
    const job = await createJob(account)
    await printed(job.print_job_id, new Date().toISOString())
    const res = await client.post(`/console/jobs/${job.print_job_id}/cancel`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/console/jobs/${job.print_job_id}?cancel=refused`)
    expect((await stored(account, job.print_job_id))?.status).toBe('printed')

    const api = await apiCancel(account, job.print_job_id)
    expect(api.status).toBe(409)
    expect(api.body).toMatchObject({ error_code: 'print_job_not_cancellable' })
    const page = await client.get(res.headers.location as string)
    expect(page.body).toContain(
      `<p class="notice error" role="alert">print_job_not_cancellable: ${api.body.message}</p>`,
    )
  })

  it('shows another account’s job as not found, on the page, the state and the cancel alike', async () => {
    const theirs = await createJob(h.otherAccount)
    const page = await owner.get(`/console/jobs/${theirs.print_job_id}`)
    expect(page.statusCode).toBe(404)
    expect(page.body).toContain('<h1>Job not found</h1>')
    expect(page.body).not.toContain(theirs.print_job_id)
    expect(page.body).not.toContain('Receipts')

    const live = await owner.get(`/console/jobs/${theirs.print_job_id}/state`)
    expect(live.statusCode).toBe(404)
    expect(live.json()).toEqual({ error_code: 'print_job_not_found', message: 'No such print job.' })

    const cancel = await owner.post(`/console/jobs/${theirs.print_job_id}/cancel`)
    expect(cancel.statusCode).toBe(404)
    expect((await stored(h.otherAccount, theirs.print_job_id))?.status).toBe('pending')
  })

  it('answers malformed and unknown job ids with a 404, never a 500', async () => {
    for (const id of ['not-a-job', '1', `${randomUUID()}x`, randomUUID(), '%00', "'%20OR%201=1"]) {
      expect((await owner.get(`/console/jobs/${id}`)).statusCode, id).toBe(404)
      expect((await owner.get(`/console/jobs/${id}/state`)).statusCode, id).toBe(404)
      expect((await owner.post(`/console/jobs/${id}/cancel`)).statusCode, id).toBe(404)
    }
  })

  it('lets a member see and cancel the account’s jobs', async () => {
    const member = await h.signIn('member')
    const job = await createJob(h.account)
    const list = await member.get('/console/jobs')
    expect(list.statusCode).toBe(200)
    expect(jobIdsIn(list.body)).toContain(job.print_job_id)
    expect((await member.get(`/console/jobs/${job.print_job_id}`)).statusCode).toBe(200)
    const cancel = await member.post(`/console/jobs/${job.print_job_id}/cancel`)
    expect(cancel.headers.location).toBe(`/console/jobs/${job.print_job_id}?cancel=cancelled`)
    expect((await stored(h.account, job.print_job_id))?.status).toBe('cancelled')
  })

  it('changes nothing on a cancel without the session’s CSRF token', async () => {
    const job = await createJob(h.account)
    const res = await owner.post(`/console/jobs/${job.print_job_id}/cancel`, { _csrf: 'forged' })
    expect(res.statusCode).toBe(403)
    expect((await stored(h.account, job.print_job_id))?.status).toBe('pending')
  })

  it('sends someone signed out to sign in', async () => {
    const job = await createJob(h.account)
    const anonymous = h.anonymous()
    for (const path of [
      '/console/jobs',
      `/console/jobs/${job.print_job_id}`,
      `/console/jobs/${job.print_job_id}/state`,
    ]) {
      const res = await anonymous.get(path)
      expect(res.statusCode, path).toBe(303)
      expect(res.headers.location).toMatch(/^\/console\/sign-in/)
    }
    const cancel = await anonymous.post(`/console/jobs/${job.print_job_id}/cancel`)
    expect([303, 403]).toContain(cancel.statusCode)
    expect((await stored(h.account, job.print_job_id))?.status).toBe('pending')
  })
})

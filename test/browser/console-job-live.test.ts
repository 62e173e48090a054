import type { AddressInfo } from 'node:net'
import { type BrowserContext, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JobLifecycle } from '../../cloud/print-jobs/lifecycle.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import { type ConsoleHarness, startConsoleHarness } from '../cloud/console/console-harness.ts'
import { ESCPOS_RECEIPT } from '../cloud/test-cloud.ts'
import { newTempDir, stopAll } from '../e2e/harness.ts'
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.ts'

/**
 * The job page's live update (cloud/console/assets/console.js) in headless Chromium: the page follows a job
 * through its states without a reload, while the cloud moves it as its hub's reports would.
 */
describe('a console job page in a real browser', () => {
  let h: ConsoleHarness
  let browser: BrowserContext | undefined
  let base: string

  beforeAll(async () => {
    h = await startConsoleHarness()
    await h.cloud.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(h.cloud.app.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
    await stopAll()
  })

  it('follows a job from pending to printed in place, and stops with the cancel button gone', async () => {
    const owner = await h.signIn('owner')
    const created = await h.cloud.app.inject({
      method: 'POST',
      url: '/api/v1/print-jobs/from-base64',
      headers: { authorization: `Bearer ${await h.account.token()}` },
      payload: {
        printer_id: h.account.receiptPrinterId,
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
      },
    })
    const id = (created.json() as PrintJob).print_job_id
    const lifecycle = new JobLifecycle(h.cloud.storage.printJobs)

    browser = await chromium.launchPersistentContext(await newTempDir('chromium-profile-'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 390, height: 844 },
    })
    await browser.addCookies(
      [...owner.cookies()].map(([name, value]) => ({ name, value, domain: '127.0.0.1', path: '/console' })),
    )
    const page = await browser.newPage()
    const problems: string[] = []
    page.on('console', (message) => {
      // A failed load is told with its address by the response handler below.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text())
    })
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`)
    })
    page.on('pageerror', (error) => problems.push(error.message))
    let loads = 0
    page.on('load', () => {
      loads += 1
    })
    const stateReads: string[] = []
    page.on('request', (request) => {
      if (request.url().endsWith(`/console/jobs/${id}/state`)) stateReads.push(request.url())
    })

    /**
     * Waits until the element marked `data-job-field=field` has `text` (10 s at most, so that a page that
     * never changes fails clearly). The page is never reloaded: only console.js can change it.
     */
    const until = (field: string, text: string) =>
      page.locator(`[data-job-field="${field}"]`).filter({ hasText: text }).waitFor({ timeout: 10_000 })

    const opened = await page.goto(`${base}/console/jobs/${id}`)
    expect(opened?.status()).toBe(200)
    const status = page.locator('[data-job-field="status"]')
    expect(await status.textContent()).toBe('Pending')
    expect(await page.locator('form[data-job-cancel]').isVisible()).toBe(true)

    const at = (second: number) => `2026-11-24T10:00:0${second}.000Z`
    expect(await lifecycle.offered(id, new Date(at(1)))).toBe(true)
    expect(await lifecycle.apply(id, 'reserve', { reserved_at: at(1) })).toBe(true)
    expect(await lifecycle.apply(id, 'wait', { waiting_reason: 'cover_open' })).toBe(true)
    await until('waiting', "The printer's cover is open")
    expect(await status.textContent()).toBe('Reserved by its hub')
    expect(await status.getAttribute('class')).toBe('badge warn')
    expect(await page.locator('[data-job-field="reserved_at"]').textContent()).toBe('2026-11-24 10:00:01 UTC')
    expect(await page.locator('[data-job-field="reserved_at"]').getAttribute('datetime')).toBe(at(1))

    expect(await lifecycle.hubReported(id, 'printing', at(2))).toBe(true)
    await until('status', 'Printing')
    expect(await page.locator('form[data-job-cancel]').count()).toBe(0)
    expect(await page.locator('[data-job-field="waiting"]').textContent()).toBe('Not waiting')

    expect(await lifecycle.hubReported(id, 'printed', at(3))).toBe(true)
    await until('status', 'Printed')
    // console.js marks the page final when it stops reading.
    expect(await page.locator('[data-job-state]').getAttribute('data-job-final')).toBe('true')
    expect(await status.getAttribute('class')).toBe('badge ok')
    expect(await page.locator('[data-job-field="completed_at"]').getAttribute('datetime')).toBe(at(3))
    // The status is announced where it changes.
    expect(await page.locator('dd[aria-live="polite"] [data-job-field="status"]').count()).toBe(1)
    // One load: every change came in place, by the state endpoint.
    expect(loads).toBe(1)
    expect(stateReads.length).toBeGreaterThanOrEqual(3)
    expect(problems).toEqual([])
  })
})

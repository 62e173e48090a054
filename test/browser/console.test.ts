import { rmSync } from 'node:fs'
import path from 'node:path'
import { type Browser, chromium, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { textSlip } from '../../protocol/text-slip.ts'
import { ApiClient } from '../e2e/api-client.ts'
import {
  type CloudProcess,
  type HubProcess,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from '../e2e/harness.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ARTIFACTS, CHROMIUM, CHROMIUM_ARGS } from './chromium.ts'
import { DESKTOP, PageProblems, PHONE, screenshotBothWidths, unlabelledControls } from './page-checks.ts'

const SCREENSHOTS = path.join(ARTIFACTS, 'console')
const PASSWORD = 'correct horse battery staple'
const RECEIPT = Buffer.from('\x1b@Pending receipt\n\x1dVB\x00', 'latin1')

/**
 * The account console in headless Chromium against real processes (issue 12, point 8): a cloud, a hub started
 * with the command the console shows, and a simulated receipt printer on 127.0.0.1. One person's afternoon,
 * step by step: each step relies on the ones before it.
 */
describe('the account console in a real browser', { timeout: 60_000 }, () => {
  let cloud: CloudProcess
  let printer: PrinterSimulator
  let browser: Browser
  let page: Page
  let problems: PageProblems
  let hub: HubProcess | undefined
  let accountId: string
  let otherAccountId: string
  let accessToken: string
  let printerId: string
  let printedJobId: string

  /** One step of the story: once a step fails, the steps after it are skipped (they rely on it). */
  let failed: string | undefined
  const step = (name: string, run: () => Promise<void>) =>
    it(name, async (context) => {
      if (failed) context.skip(`an earlier step failed: ${failed}`)
      try {
        await run()
      } catch (error) {
        failed = name
        throw error
      }
    })

  /** A user made with the CLI's command, as an operator would (issue 12, point 1). */
  const createUser = async (account: string, email: string, role: 'owner' | 'member') =>
    (await cloud.admin(['user', 'create', '--account', account, '--email', email, '--role', role])) as {
      user_id: string
      set_password_url: string
    }

  /** Every page the test looks at: no console error or CSP violation so far, every control labelled, both widths. */
  const look = async (name: string) => {
    expect(await unlabelledControls(page)).toStrictEqual([])
    expect(await screenshotBothWidths(page, SCREENSHOTS, name)).toBeLessThanOrEqual(PHONE.width)
    expect(problems.list()).toStrictEqual([])
  }

  /**
   * Reloads the page until `locator` is visible, as a person would: these pages show the state as it was when
   * they were rendered (the job page is the one that follows its job by itself).
   */
  const reloadUntilVisible = async (locator: Locator) => {
    await expect
      .poll(
        async () => {
          if (await locator.isVisible()) return true
          await page.reload()
          return locator.isVisible()
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(true)
  }

  /** Opens the one-time link, sets the password, and arrives at the sign-in page. */
  const setPassword = async (link: string) => {
    const opened = await page.goto(link)
    expect(opened?.status()).toBe(200)
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD)
    await page.getByLabel('New password again').fill(PASSWORD)
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/console/sign-in'),
      page.getByRole('button', { name: 'Set password' }).click(),
    ])
  }

  const focusedId = () => page.evaluate<string | undefined>('document.activeElement?.id')

  const signIn = async (email: string) => {
    await page.getByLabel('E-mail').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/console'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ])
  }

  const signOut = async () => {
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/console/sign-in'),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ])
  }

  beforeAll(async () => {
    // Only this run's screenshots: none left from a page that has since changed its name.
    rmSync(SCREENSHOTS, { recursive: true, force: true })
    cloud = await startCloudProcess()
    printer = await startPrinterSimulator({ language: 'escpos' })
    accountId = (await cloud.admin(['account', 'create', '--name', 'Corner Bakery'])).account_id as string
    otherAccountId = (await cloud.admin(['account', 'create', '--name', 'Harbour Books']))
      .account_id as string
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
    const context = await browser.newContext({ viewport: DESKTOP })
    page = await context.newPage()
    // Nothing here takes long when it works: a missing element fails in seconds, not the default 30.
    page.setDefaultTimeout(10_000)
    problems = new PageProblems(page)
  })
  afterAll(async () => {
    await browser?.close()
    await stopAll()
    await printer?.close()
  })

  step(
    'an owner made with the CLI sets a password through the link, then signs in with the keyboard',
    async () => {
      const owner = await createUser(accountId, 'owner@bakery.test', 'owner')
      expect(owner.set_password_url.startsWith(`${cloud.url}/console/`)).toBe(true)
      await page.goto(owner.set_password_url)
      await look('set-password')
      await setPassword(owner.set_password_url)
      await look('sign-in')

      // Keyboard only: Tab to the e-mail field, type, Tab to the password, type, Enter submits.
      for (let tabs = 0; tabs < 5; tabs++) {
        if ((await focusedId()) === 'email') break
        await page.keyboard.press('Tab')
      }
      expect(await focusedId()).toBe('email')
      await page.keyboard.type('owner@bakery.test')
      await page.keyboard.press('Tab')
      expect(await focusedId()).toBe('password')
      await page.keyboard.type(PASSWORD)
      await Promise.all([page.waitForURL((url) => url.pathname === '/console'), page.keyboard.press('Enter')])
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
      await look('overview-empty')
      await page.goto(`${cloud.url}/console/users`)
      await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor()
      await look('users')
    },
  )

  step('creates an API client and gets a token with its secret at /oauth/token', async () => {
    await page.goto(`${cloud.url}/console/api-clients`)
    await look('api-clients')
    await page.getByLabel('Name', { exact: true }).fill('Till backend')
    for (const scope of ['printers:read', 'documents:write', 'print_jobs:write', 'print_jobs:read'])
      await page.getByLabel(scope).check()
    await expect(page.getByLabel('webhooks:write').isChecked()).resolves.toBe(false)
    await page.getByRole('button', { name: 'Create API client' }).click()
    // The answer to the form shows the secret, once, with a warning.
    await page.getByRole('alert').filter({ hasText: 'shown only on this page' }).waitFor()
    const clientId = (await page.locator('#new-client-id').textContent()) ?? ''
    const secret = (await page.locator('#new-client-secret').textContent()) ?? ''
    expect(clientId).toMatch(/^[0-9a-f-]{36}$/)
    expect(secret).toMatch(/\S{20}/)
    await look('api-client-created')

    const res = await fetch(`${cloud.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
      }),
    })
    expect(res.status).toBe(200)
    const token = (await res.json()) as { access_token: string; token_type: string }
    expect(token.token_type).toBe('Bearer')
    accessToken = token.access_token
    const printers = await new ApiClient(cloud.url, accessToken).request('GET', '/api/v1/printers')
    expect(printers).toStrictEqual({ status: 200, body: { data: [], next_cursor: null } })
  })

  step('adds a webhook endpoint, sees its signing secret once and sends it a test event', async () => {
    await page.goto(`${cloud.url}/console/webhooks`)
    await look('webhooks-empty')
    await page.getByLabel('URL').fill('https://hooks.bakery.example/print')
    await page.getByLabel('Description').fill('Till backend')
    await page.getByLabel('print_job.printed').check()
    await page.getByLabel('print_job.failed').check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByRole('alert').filter({ hasText: 'shown only on this page' }).waitFor()
    const secret = (await page.locator('#new-webhook-secret').textContent()) ?? ''
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    await look('webhook-created')

    await page.getByRole('link', { name: 'https://hooks.bakery.example/print' }).first().click()
    await page.getByRole('heading', { level: 1, name: 'https://hooks.bakery.example/print' }).waitFor()
    expect(await page.content()).not.toContain(secret)
    await Promise.all([
      page.waitForURL((url) => url.searchParams.get('done') === 'test'),
      page.getByRole('button', { name: 'Send test event' }).click(),
    ])
    await page.getByRole('cell', { name: 'webhook.test' }).waitFor()
    await look('webhook-endpoint')
  })

  step('adds a hub, runs the command the console shows, and sees the hub come online', async () => {
    await page.goto(`${cloud.url}/console/hubs`)
    await look('hubs-empty')
    await page.getByLabel('Name').fill('Front counter hub')
    await page.getByRole('button', { name: 'Add hub' }).click()
    // The answer to the form shows the token, once, and the commands that use it.
    await page.getByRole('alert').filter({ hasText: 'shown only on this page' }).waitFor()
    const token = (await page.locator('#enrollment-token').textContent()) ?? ''
    const command = (await page.locator('#checkout-command').textContent()) ?? ''
    expect(command).toBe(`npm run -s hub -- run --cloud ${cloud.url} --data ./hub-data --enroll ${token}`)
    await look('hub-added')

    // That command, run as `npm run -s hub --` runs it, with the hub's files in a temporary directory rather than
    // ./hub-data, and the printer beside it.
    const words = command.split(' ')
    const value = (flag: string) => words[words.indexOf(flag) + 1] ?? ''
    hub = await startHubProcess({
      cloudUrl: value('--cloud'),
      enroll: value('--enroll'),
      printers: [`${printer.uri}&name=${encodeURIComponent('Receipt printer')}`],
    })

    await page.goto(`${cloud.url}/console/hubs`)
    await reloadUntilVisible(page.getByRole('row', { name: /Front counter hub/ }).getByText('Online'))
    await expect(page.getByText('No enrollments are waiting for a hub.').isVisible()).resolves.toBe(true)
    await look('hubs')
    await page.getByRole('link', { name: 'Front counter hub' }).click()
    await page.getByRole('heading', { level: 1, name: 'Front counter hub' }).waitFor()
    expect(page.url()).toBe(`${cloud.url}/console/hubs/${hub.agentId}`)
    await look('hub')
    await page.goto(`${cloud.url}/console`)
    await reloadUntilVisible(page.getByRole('row', { name: /Receipt printer/ }).getByText('Online'))
    await look('overview')
  })

  step('prints a test page from the printer’s page and sees it reach printed without a reload', async () => {
    await page.goto(`${cloud.url}/console/printers`)
    await reloadUntilVisible(page.getByRole('row', { name: /Receipt printer/ }).getByText('Online'))
    await look('printers')
    await page.getByRole('link', { name: 'Receipt printer' }).click()
    printerId = page.url().split('/').pop() ?? ''
    await look('printer')
    // Out of paper, the hub holds the job: the job page opens on a job in flight.
    printer.clear()
    printer.setCondition({ paperOut: true })
    await Promise.all([
      page.waitForURL((url) => url.pathname.startsWith('/console/jobs/')),
      page.getByRole('button', { name: 'Print test page' }).click(),
    ])
    printedJobId = new URL(page.url()).pathname.split('/').pop() ?? ''
    let navigations = 0
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++
    })
    await page.locator('[data-job-field="waiting"]', { hasText: 'The printer is out of paper' }).waitFor()
    await look('job-waiting')
    // Paper back: the hub prints, and the page follows the job to the end by itself.
    printer.setCondition({ paperOut: false })
    await page.locator('[data-job-field="status"]', { hasText: 'Printed' }).waitFor({ timeout: 20_000 })
    expect(navigations).toBe(0)
    await expect(page.locator('[data-job-field="waiting"]').textContent()).resolves.toBe('Not waiting')
    // The cancel button went with it.
    await expect(page.getByRole('button', { name: 'Cancel this job' }).count()).resolves.toBe(0)
    await look('job-printed')
    // The printer got the test page byte for byte: the ESC/POS slip naming the printer and the time it was sent.
    const received = printer.received()
    const sent = /Sent \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/.exec(received.toString('latin1'))?.[0] ?? 'no time'
    const slip = textSlip('escpos', { title: 'Printer: Receipt printer', emphasis: 'TEST PAGE', note: sent })
    expect(received).toStrictEqual(Buffer.from(slip))

    await page.goto(`${cloud.url}/console/jobs`)
    await page
      .getByRole('row', { name: /Receipt printer/ })
      .getByText('Printed')
      .waitFor()
    await look('jobs')
  })

  step('cancels a job the hub cannot print yet', async () => {
    // Out of paper again: the hub reserves the job and waits, and only the hub can say none of it printed.
    printer.clear()
    printer.setCondition({ paperOut: true })
    const api = new ApiClient(cloud.url, accessToken)
    const job = await api.printRaw(printerId, RECEIPT, 'escpos')
    await api.waitForJob(job.print_job_id, ['reserved'])

    await page.goto(`${cloud.url}/console/jobs/${job.print_job_id}`)
    await page.locator('[data-job-field="waiting"]', { hasText: 'The printer is out of paper' }).waitFor()
    await look('job-reserved')
    await Promise.all([
      page.waitForURL((url) => url.searchParams.has('cancel')),
      page.getByRole('button', { name: 'Cancel this job' }).click(),
    ])
    // The hub drops it: at once (`cancelled`), or, on a machine so busy that the hub answers after the cloud's
    // CANCEL_CONFIRM_TIMEOUT_MS, later (`requested`), and the page follows it to Cancelled.
    expect(['cancelled', 'requested']).toContain(new URL(page.url()).searchParams.get('cancel'))
    await page.locator('[data-job-field="status"]', { hasText: 'Cancelled' }).waitFor({ timeout: 20_000 })
    await look('job-cancelled')
    expect(await api.job(job.print_job_id)).toMatchObject({ status: 'cancelled', failure_reason: null })
    // With paper back, the dropped job stays unprinted.
    printer.setCondition({ paperOut: false })
    const next = await api.printRaw(printerId, RECEIPT, 'escpos')
    await api.waitForJob(next.print_job_id, ['printed'])
    expect(printer.received()).toStrictEqual(RECEIPT)

    // The Overview counts the day's jobs by status: the test page and this receipt printed, one cancelled.
    await page.goto(`${cloud.url}/console`)
    const count = (status: string) =>
      page
        .getByRole('row', { name: new RegExp(`^${status} \\d+$`) })
        .getByRole('cell')
        .textContent()
    await expect(count('Printed')).resolves.toBe('2')
    await expect(count('Cancelled')).resolves.toBe('1')
    await expect(count('Failed')).resolves.toBe('0')
    await look('overview-jobs')
  })

  step(
    'renames and removes the hub, and revokes the API client, whose token then stops working',
    async () => {
      const agentId = hub?.agentId ?? ''
      await page.goto(`${cloud.url}/console/hubs/${agentId}`)
      await page.getByLabel('Name').fill('Front desk hub')
      await Promise.all([
        page.waitForURL((url) => url.searchParams.get('done') === 'renamed'),
        page.getByRole('button', { name: 'Rename hub' }).click(),
      ])
      await page.getByRole('heading', { level: 1, name: 'Front desk hub' }).waitFor()
      await page.getByRole('link', { name: 'Remove this hub…' }).click()
      await page.getByRole('heading', { level: 1, name: 'Remove Front desk hub?' }).waitFor()
      await look('hub-remove')
      await Promise.all([
        page.waitForURL((url) => url.searchParams.get('done') === 'removed'),
        page.getByRole('button', { name: 'Remove it' }).click(),
      ])
      await page.getByText('No hubs yet.').waitFor()
      await look('hubs-removed')

      await page.goto(`${cloud.url}/console/api-clients`)
      await page.getByRole('link', { name: 'Revoke Till backend' }).click()
      await page.getByRole('heading', { level: 1, name: 'Revoke Till backend?' }).waitFor()
      await look('api-client-revoke')
      await Promise.all([
        page.waitForURL((url) => url.searchParams.get('done') === 'revoked'),
        page.getByRole('button', { name: 'Revoke it' }).click(),
      ])
      await look('api-clients-revoked')
      const refused = await new ApiClient(cloud.url, accessToken).request('GET', '/api/v1/printers')
      expect(refused.status).toBe(401)
    },
  )

  step('signs out, and a signed-in page then asks to sign in', async () => {
    await signOut()
    expect(new URL(page.url()).searchParams.get('done')).toBe('signed-out')
    await look('signed-out')
    await page.goto(`${cloud.url}/console/jobs`)
    const url = new URL(page.url())
    expect(url.pathname).toBe('/console/sign-in')
    expect(url.searchParams.get('next')).toBe('/console/jobs')
  })

  step('refuses a member the API clients page', async () => {
    const member = await createUser(accountId, 'member@bakery.test', 'member')
    await setPassword(member.set_password_url)
    await signIn('member@bakery.test')
    await expect(page.getByRole('link', { name: 'API clients' }).count()).resolves.toBe(0)
    await expect(page.getByRole('link', { name: 'Webhooks' }).count()).resolves.toBe(0)
    const url = `${cloud.url}/console/api-clients`
    problems.expectErrorStatus(url)
    const refused = await page.goto(url)
    expect(refused?.status()).toBe(403)
    await page.getByRole('heading', { level: 1, name: 'Not allowed' }).waitFor()
    await look('forbidden')
    await signOut()
  })

  step('shows another account’s job as not found', async () => {
    const stranger = await createUser(otherAccountId, 'owner@books.test', 'owner')
    await setPassword(stranger.set_password_url)
    await signIn('owner@books.test')
    const url = `${cloud.url}/console/jobs/${printedJobId}`
    problems.expectErrorStatus(url)
    const opened = await page.goto(url)
    expect(opened?.status()).toBe(404)
    await page.getByRole('heading', { level: 1, name: 'Job not found' }).waitFor()
    await expect(page.getByText('Receipt printer').count()).resolves.toBe(0)
    await look('job-not-found')
  })
})

import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ManagedAccount } from '../../protocol/partner.ts'
import { type CloudProcess, newTempDir, startCloudProcess, stopAll } from '../e2e/harness.ts'
import {
  type HttpPartner,
  type PairingHub,
  registerHttpPartner,
  startPairingHub,
} from '../e2e/pairing-partner.ts'
import { ARTIFACTS, CHROMIUM, CHROMIUM_ARGS } from './chromium.ts'

describe('onboarding in a real browser', () => {
  let cloud: CloudProcess
  let partner: HttpPartner
  let hub: PairingHub | undefined
  let browser: BrowserContext | undefined
  let returnServer: Server
  let returnUri: string
  const returned: URL[] = []

  beforeAll(async () => {
    cloud = await startCloudProcess()
    partner = await registerHttpPartner(cloud)
    // The partner's return_uri: a local server that records where the browser was sent.
    returnServer = createServer((req, res) => {
      // Chromium asks the page's origin for its icon after the redirect: that is not the partner's page.
      if (req.url === '/favicon.ico') {
        res.writeHead(404).end()
        return
      }
      returned.push(new URL(req.url ?? '/', returnUri))
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!doctype html><title>Done</title>')
    })
    await new Promise<void>((resolve) => returnServer.listen(0, '127.0.0.1', resolve))
    returnUri = `http://127.0.0.1:${(returnServer.address() as AddressInfo).port}/onboarding/done`
  })
  afterAll(async () => {
    await browser?.close()
    await hub?.stop()
    await new Promise((resolve) => returnServer?.close(resolve))
    await stopAll()
  })

  it('pairs a hub by the code it logged, typed on a phone-sized page, and returns to the partner with its state', async () => {
    const state = randomUUID()
    const shop = await partner.provision(returnUri, state)
    hub = await startPairingHub(cloud.url)
    const code = String((await hub.pairingLine).pairing_code)

    browser = await chromium.launchPersistentContext(await newTempDir('chromium-profile-'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    })
    const page = await browser.newPage()
    const cspViolations: string[] = []
    page.on('console', (message) => {
      if (/Content[- ]Security[- ]Policy/i.test(message.text())) cspViolations.push(message.text())
    })

    const opened = await page.goto(shop.agent_enrollment.onboarding_url)
    expect(opened?.status()).toBe(200)
    expect(await page.title()).toBe('Connect your printer hub')
    // The input is found by its label: the label is tied to it.
    const input = page.getByLabel('Pairing code')
    await expect(input.getAttribute('aria-describedby')).resolves.toBe('code-hint')
    // Nothing wider than the phone's screen.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: path.join(ARTIFACTS, 'onboarding-phone.png'), fullPage: true })

    // Keyboard only: focus the field, type, Enter submits.
    await input.focus()
    await page.keyboard.type(code.toLowerCase())
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(returnUri)),
      page.keyboard.press('Enter'),
    ])

    expect(returned.map((url) => url.pathname)).toStrictEqual(['/onboarding/done'])
    const back = returned[0] as URL
    expect(back.pathname).toBe('/onboarding/done')
    expect(back.searchParams.get('state')).toBe(state)
    expect(back.searchParams.get('result')).toBe('paired')
    expect(cspViolations).toStrictEqual([])

    const ready = await hub.ready
    expect(ready.agent_id).toBe(back.searchParams.get('agent_id'))
    for (;;) {
      const res = await partner.request('GET', `/partner-api/v1/accounts/${shop.relationship_id}`)
      const account = (await res.json()) as ManagedAccount
      if (account.health.agents.online === 1) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }

    // Back on the used link: a clear 410 page.
    const again = await page.goto(shop.agent_enrollment.onboarding_url)
    expect(again?.status()).toBe(410)
    expect(await page.locator('h1').textContent()).toBe('This link was already used')
  })
})

import { afterAll, describe, expect, it } from 'vitest'
import type { Agent } from '../../protocol/agent.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import { setUpAccount, startCloudProcess, startHubProcess, stopAll } from './harness.ts'

/** Issue 7, point 6: while idle, a live hub keeps its `last_seen_at` and its printers' `checked_at` fresh. */
describe('an idle hub', { timeout: 60_000 }, () => {
  afterAll(() => stopAll())

  it('keeps last_seen_at and each printer’s health.checked_at moving', async () => {
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    const api = new ApiClient(cloud.url, account.accessToken)
    const printer = await startPrinterSimulator({ language: 'escpos' })
    try {
      // FAST_HUB_ENV polls idle printers every 500 ms.
      await startHubProcess({ cloudUrl: cloud.url, enroll: account.enrollmentToken, printers: [printer.uri] })
      const [first] = await api.waitForPrinters(1)
      const agentSeen = async () =>
        (await api.request<{ data: Agent[] }>('GET', '/api/v1/agents')).body.data[0]?.last_seen_at ?? ''
      const checkedAt = async () => (await api.printers())[0]?.health?.checked_at ?? ''
      const seen = await agentSeen()
      const checked = first!.health!.checked_at
      await expect.poll(agentSeen, { timeout: 10_000 }).not.toBe(seen)
      await expect.poll(checkedAt, { timeout: 10_000 }).not.toBe(checked)
      expect(Date.parse(await agentSeen())).toBeGreaterThan(Date.parse(seen))
      expect(Date.parse(await checkedAt())).toBeGreaterThan(Date.parse(checked))
    } finally {
      await printer.close()
    }
  })
})

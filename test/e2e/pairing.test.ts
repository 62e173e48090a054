import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pairingSlip } from '../../hub/pairing/code-slip.ts'
import type { ManagedAccount } from '../../protocol/partner.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { type CloudProcess, startCloudProcess, stopAll } from './harness.ts'
import { type HttpPartner, type PairingHub, registerHttpPartner, startPairingHub } from './pairing-partner.ts'

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

describe('a hub started without --enroll pairs by the code it shows', () => {
  let cloud: CloudProcess
  let partner: HttpPartner
  let hub: PairingHub | undefined
  let printer: PrinterSimulator

  beforeAll(async () => {
    cloud = await startCloudProcess()
    partner = await registerHttpPartner(cloud)
    printer = await startPrinterSimulator({ language: 'escpos' })
  })
  afterAll(async () => {
    await hub?.stop()
    await printer?.close()
    await stopAll()
  })

  it('logs and prints its code, is paired through the onboarding page, runs, and shows online under the managed account', async () => {
    const state = randomUUID()
    const shop = await partner.provision('http://127.0.0.1:9/done', state)
    hub = await startPairingHub(cloud.url, [printer.uri])

    const line = await hub.pairingLine
    const code = String(line.pairing_code)
    expect(code).toMatch(USER_CODE)
    expect(line.msg).toBe(`pairing code ${code}: open the onboarding link you were given and type this code`)
    expect(line.level).toBe(30)
    // Printed on its receipt printer: exactly the slip, the code in the bytes.
    const slip = pairingSlip('escpos', code)
    expect(await printer.waitForBytes(slip.length)).toStrictEqual(slip)
    expect(slip.includes(Buffer.from(`${code}\n`))).toBe(true)

    const answer = await fetch(shop.agent_enrollment.onboarding_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code }),
      redirect: 'manual',
    })
    expect(answer.status).toBe(303)
    const location = new URL(String(answer.headers.get('location')))
    expect(location.searchParams.get('state')).toBe(state)
    expect(location.searchParams.get('result')).toBe('paired')

    const ready = await hub.ready
    expect(ready.agent_id).toBe(location.searchParams.get('agent_id'))

    // Online under the managed account, as its partner sees it.
    for (;;) {
      const account = (await (
        await partner.request('GET', `/partner-api/v1/accounts/${shop.relationship_id}`)
      ).json()) as ManagedAccount
      if (account.health.agents.online === 1) {
        expect(account.health.agents).toStrictEqual({ total: 1, online: 1, offline: 0 })
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  })
})

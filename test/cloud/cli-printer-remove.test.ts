import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HubPrinter } from '../../protocol/hub-messages.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'
import { cloudCli } from '../helpers/cli.ts'
import {
  ESCPOS_RECEIPT,
  RECEIPT_PRINTER,
  startTestCloud,
  type TestAccount,
  type TestCloud,
} from './test-cloud.ts'

/** `cloud printer remove` against the database of a running cloud app. */
describe('cloud printer remove', () => {
  let cloud: TestCloud
  let shop: TestAccount
  const remove = (printerId: string) =>
    cloudCli(['printer', 'remove', '--id', printerId], { DATA_DIR: cloud.dataDir })
  const api = async (method: 'GET' | 'POST', url: string, payload?: object) =>
    cloud.app.inject({ method, url, headers: { authorization: `Bearer ${await shop.token()}` }, payload })
  const receipt = (printerId: string) => ({
    printer_id: printerId,
    document_format: 'raw',
    document_raw_language: 'escpos',
    document_base64: ESCPOS_RECEIPT.toString('base64'),
  })
  const listed = async () =>
    ((await api('GET', '/api/v1/printers')).json() as { data: { printer_id: string }[] }).data.map(
      (p) => p.printer_id,
    )

  beforeAll(async () => {
    cloud = await startTestCloud()
    shop = await cloud.createAccount()
  })
  afterAll(async () => cloud.close())

  it('is refused while its hub reports it (online) and while it has unfinished jobs; then its jobs stay readable', async () => {
    const hubPrinter: HubPrinter = {
      key: 'socket://127.0.0.1:9100',
      name: 'Old till',
      uri: 'socket://127.0.0.1:9100?language=escpos',
      languages: ['escpos'],
      capabilities: RECEIPT_PRINTER,
      health: { state: 'ready', reasons: [], checked_at: new Date().toISOString() },
    }
    const printerId = printerIdFor(shop.agentId, hubPrinter.key)
    await cloud.storage.printers.syncFromHub(
      shop.accountId,
      shop.agentId,
      [hubPrinter],
      new Date().toISOString(),
    )
    expect(await remove(printerId)).toEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: printer ${printerId} is online: its hub still reports it; take it off the hub (its --printer) first\n`,
    })

    const created = await api('POST', '/api/v1/print-jobs/from-base64', receipt(printerId))
    expect(created.statusCode).toBe(201)
    const job = created.json() as { print_job_id: string }
    // The hub no longer reports it: offline, with a pending job.
    await cloud.storage.printers.syncFromHub(shop.accountId, shop.agentId, [], new Date().toISOString())
    expect(await remove(printerId)).toEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: printer ${printerId} has 1 unfinished print jobs; cancel them or let them expire first\n`,
    })
    expect((await api('POST', `/api/v1/print-jobs/${job.print_job_id}/cancel`)).json()).toMatchObject({
      status: 'cancelled',
    })

    const removed = await remove(printerId)
    expect(removed.status).toBe(0)
    expect(JSON.parse(removed.stdout)).toEqual({
      printer_id: printerId,
      account_id: shop.accountId,
      removed_at: expect.any(String),
    })
    expect(await listed()).not.toContain(printerId)
    const kept = await api('GET', `/api/v1/print-jobs/${job.print_job_id}`)
    expect(kept.json()).toMatchObject({
      print_job_id: job.print_job_id,
      printer_id: printerId,
      status: 'cancelled',
    })
    const refused = await api('POST', '/api/v1/print-jobs/from-base64', receipt(printerId))
    expect(refused.statusCode).toBe(422)

    // Its hub reports it again: it is back.
    await cloud.storage.printers.syncFromHub(
      shop.accountId,
      shop.agentId,
      [hubPrinter],
      new Date().toISOString(),
    )
    expect(await listed()).toContain(printerId)
  })
})

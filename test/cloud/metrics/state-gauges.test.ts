import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { registerStateGauges } from '../../../cloud/metrics/state-gauges.ts'
import type { HubPrinter } from '../../../protocol/hub-messages.ts'
import { printerIdFor } from '../../../protocol/printer-id.ts'
import { ENGINES, storageForEachTest } from '../storage/engines.ts'
import { storeJob } from '../storage/stored-jobs.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'
import { promtoolCheck } from './promtool.ts'

const reported = (key: string): HubPrinter => ({
  key,
  name: `Printer ${key}`,
  uri: `socket://192.0.2.10:9100?k=${key}`,
  languages: ['escpos'],
  capabilities: RECEIPT_PRINTER,
  health: { state: 'ready', reasons: [], checked_at: '2026-11-25T09:00:00.000Z' },
})

/**
 * The gauges read at scrape time, over storage on both engines: the fleet's queues, hubs and printers online
 * (one aggregate query each), and on PostgreSQL the node's connection pool.
 */
describe.each(ENGINES)('state gauges on %s', (engine) => {
  const t = storageForEachTest(engine)

  it('reads the unfinished jobs by status, the hubs and printers online, and the pool', async () => {
    const { storage } = t
    const accountId = (await storage.accounts.create('Shop')).account_id
    const online = (await storage.agents.insert({ account_id: accountId, name: 'on' })).agent_id
    const offline = (await storage.agents.insert({ account_id: accountId, name: 'off' })).agent_id
    await storage.printers.syncFromHub(
      accountId,
      online,
      [reported('a'), reported('b')],
      '2026-11-25T09:00:00Z',
    )
    await storage.printers.syncFromHub(accountId, offline, [reported('c')], '2026-11-25T09:00:00Z')
    await storage.hubPresence.markOnline(online, 's1', '2026-11-25T09:00:01Z')
    const printer = printerIdFor(online, 'a')
    await storeJob(storage, accountId, printer)
    await storeJob(storage, accountId, printer)
    await storeJob(storage, accountId, printer, { status: 'printing' })
    await storeJob(storage, accountId, printer, { status: 'printed' })

    const registry = new Registry()
    registerStateGauges(registry, {
      storage,
      brokerReady: () => true,
      brokerClients: () => 3,
      hubMessagesInProgress: () => 0,
    })
    const text = await registry.metrics()
    expect(text).toContain('\nprint_hub_print_jobs_unfinished{status="pending"} 2\n')
    expect(text).toContain('\nprint_hub_print_jobs_unfinished{status="reserved"} 0\n')
    expect(text).toContain('\nprint_hub_print_jobs_unfinished{status="printing"} 1\n')
    expect(text).toContain('\nprint_hub_hubs_online 1\n')
    expect(text).toContain('\nprint_hub_printers_online 2\n')
    expect(text).toContain('\nprint_hub_mqtt_clients_connected 3\n')
    if (engine === 'postgres') {
      expect(text).toMatch(/\nprint_hub_database_pool_connections\{state="idle"\} [1-9]\d*\n/)
      expect(text).toContain('\nprint_hub_database_pool_connections{state="active"} 0\n')
      expect(text).toMatch(/\nprint_hub_database_pool_waiting_queries 0$/m)
    } else expect(text).not.toContain('print_hub_database_pool')
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' })
  })
})

import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../cloud/config.ts'
import { startCloud } from '../../cloud/server.ts'
import { openStorage } from '../../cloud/storage/storage.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { RECEIPT_PRINTER } from './test-cloud.ts'

describe('a restart of the cloud', () => {
  it('shows every hub and printer offline until its hub connects again', async () => {
    const dir = tempDir('cloud-restart-')
    const before = await openStorage({ dataDir: dir.path })
    const account = await before.accounts.create('Shop')
    const agent = await before.agents.insert({ account_id: account.account_id, name: 'hub', online: true })
    const printer = await before.printers.insert({
      account_id: account.account_id,
      agent_id: agent.agent_id,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    await before.close()

    // Ports the OS picks: nothing here needs to know them beforehand.
    const config = loadConfig({ DATA_DIR: dir.path, HOST: '127.0.0.1', PORT: '0', MQTT_PORT: '0' })
    const cloud = await startCloud(config, pino({ level: 'silent' }))
    expect((await cloud.storage.agents.findById(agent.agent_id))?.online).toBe(false)
    expect((await cloud.storage.printers.findById(account.account_id, printer.printer_id))?.online).toBe(
      false,
    )
    await cloud.close()
    dir.remove()
  })
})

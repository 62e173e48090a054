import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Storage } from '../../../cloud/storage/storage.ts'
import type { HubUpdate } from '../../../protocol/hub-messages.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

const FAILED: HubUpdate = {
  version: '1.2.0',
  status: 'failed',
  failure: 'rolled_back',
  detail: 'it did not connect to the cloud within 120 s; rolled back to 1.1.0',
  at: '2026-03-01T00:00:00.000Z',
}

describe.each(ENGINES)('release pins and update reports on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage
  let shop: string
  let other: string
  let hubA: string
  let hubB: string
  let otherHub: string

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
    shop = (await storage.accounts.create('Shop')).account_id
    other = (await storage.accounts.create('Other')).account_id
    hubA = (await storage.agents.insert({ account_id: shop, name: 'A', version: '1.1.0' })).agent_id
    hubB = (await storage.agents.insert({ account_id: shop, name: 'B' })).agent_id
    otherHub = (await storage.agents.insert({ account_id: other, name: 'O' })).agent_id
  })
  afterEach(() => opened.close())

  it('a hub starts with no pins and no update', async () => {
    expect(await storage.releasePins.forHub(hubA)).toEqual({
      agent_id: hubA,
      account_id: shop,
      version: '1.1.0',
      account_pin: null,
      hub_pin: null,
      update: null,
    })
    expect(await storage.releasePins.forHub('00000000-0000-4000-8000-000000000000')).toBeUndefined()
  })

  it('an account pin reaches every hub of that account and no other; a hub pin only that hub', async () => {
    expect(await storage.releasePins.pinAccount(shop, '1.1.0')).toBe(true)
    expect(await storage.releasePins.pinHub(hubB, '1.2.0')).toBe(true)
    expect(await storage.releasePins.forHub(hubA)).toMatchObject({ account_pin: '1.1.0', hub_pin: null })
    expect(await storage.releasePins.forHub(hubB)).toMatchObject({ account_pin: '1.1.0', hub_pin: '1.2.0' })
    expect(await storage.releasePins.forHub(otherHub)).toMatchObject({ account_pin: null, hub_pin: null })
  })

  it('unpinning clears the pin; pinning what does not exist says so', async () => {
    await storage.releasePins.pinAccount(shop, '1.1.0')
    await storage.releasePins.pinHub(hubA, '1.2.0')
    expect(await storage.releasePins.pinAccount(shop, null)).toBe(true)
    expect(await storage.releasePins.pinHub(hubA, null)).toBe(true)
    expect(await storage.releasePins.forHub(hubA)).toMatchObject({ account_pin: null, hub_pin: null })
    expect(await storage.releasePins.pinAccount('no-such-account', '1.1.0')).toBe(false)
    expect(await storage.releasePins.pinHub('00000000-0000-4000-8000-000000000000', '1.1.0')).toBe(false)
  })

  it('keeps the latest update report as the hub sent it, and forgets it when the hub reports none', async () => {
    await storage.releasePins.recordUpdate(hubA, FAILED)
    expect((await storage.releasePins.forHub(hubA))?.update).toEqual(FAILED)
    expect((await storage.releasePins.forHub(hubB))?.update).toBeNull()
    await storage.releasePins.recordUpdate(hubA, null)
    expect((await storage.releasePins.forHub(hubA))?.update).toBeNull()
  })

  it('a stored report that is not a HubUpdate reads as none', async () => {
    await opened.db
      .updateTable('agents')
      .set({ update_report: '{"version":"x"}' })
      .where('agent_id', '=', hubA)
      .execute()
    expect((await storage.releasePins.forHub(hubA))?.update).toBeNull()
  })
})

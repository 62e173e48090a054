import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

// listLiveWithSecrets: what the account's hubs check API credentials with offline (agent-lan-credentials.ts).

describe.each(ENGINES)("an account's live API clients with their secret hashes on %s", (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage
  let shop: string
  let other: string

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
    shop = (await storage.accounts.create('Shop')).account_id
    other = (await storage.accounts.create('Other')).account_id
  })
  afterEach(() => {
    vi.useRealTimers()
    return opened.close()
  })

  it('lists them oldest first, then by id, without revoked clients or another account’s', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-02-01T00:00:00.000Z'))
    const first = await storage.apiClients.create(shop, hashSecret('cs_first'), ['printers:read'])
    const twin = await storage.apiClients.create(shop, hashSecret('cs_twin'), ['print_jobs:read'])
    vi.setSystemTime(new Date('2026-02-01T00:00:00.001Z'))
    const revoked = await storage.apiClients.create(shop, hashSecret('cs_revoked'), ['printers:read'])
    const last = await storage.apiClients.create(shop, hashSecret('cs_last'), [
      'print_jobs:write',
      'printers:read',
    ])
    await storage.apiClients.create(other, hashSecret('cs_other'), ['printers:read'])
    await storage.apiClients.revoke(revoked.client_id, new Date())
    const sameMillisecond = [first, twin]
      .sort((a, b) => (a.client_id < b.client_id ? -1 : 1))
      .map((c) => c.client_id)
    const listed = await storage.apiClients.listLiveWithSecrets(shop)
    expect(listed.map((c) => c.client_id)).toStrictEqual([...sameMillisecond, last.client_id])
    expect(listed.at(-1)).toStrictEqual({
      client_id: last.client_id,
      scopes: ['print_jobs:write', 'printers:read'],
      secret_hash: hashSecret('cs_last'),
    })
    expect(Buffer.isBuffer(listed[0]?.secret_hash)).toBe(true)
  })

  it('lists none for a suspended account, nor for an unknown one', async () => {
    await storage.apiClients.create(shop, hashSecret('cs_shop'), ['printers:read'])
    expect(await storage.apiClients.listLiveWithSecrets(shop)).toHaveLength(1)
    await opened.db
      .updateTable('accounts')
      .set({ state: 'suspended' })
      .where('account_id', '=', shop)
      .execute()
    expect(await storage.apiClients.listLiveWithSecrets(shop)).toStrictEqual([])
    expect(
      await storage.apiClients.listLiveWithSecrets('00000000-0000-4000-8000-000000000000'),
    ).toStrictEqual([])
  })
})

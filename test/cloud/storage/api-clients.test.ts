import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createApiClient } from '../../../cloud/auth/new-api-client.ts'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { secretMatches } from '../../../print-api/secrets.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

describe.each(ENGINES)('API clients with names on %s', (engine) => {
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

  it('keeps a name, the scopes once each, and only the hash of the secret', async () => {
    const { client, secret } = await createApiClient(
      storage,
      shop,
      ['print_jobs:write', 'printers:read', 'print_jobs:write'],
      'Till app ✓',
    )
    expect(secret).toMatch(/^cs_[A-Za-z0-9_-]{43}$/)
    const stored = await storage.apiClients.findById(client.client_id)
    expect(stored).toMatchObject({
      account_id: shop,
      name: 'Till app ✓',
      scopes: ['print_jobs:write', 'printers:read'],
      revoked_at: null,
    })
    expect(stored && secretMatches(secret, stored.secret_hash)).toBe(true)
    expect(stored?.secret_hash.includes(Buffer.from(secret))).toBe(false)
  })

  it("lists the account's clients oldest first with their names (null when made without), never another's", async () => {
    // Each made at its own time: within one millisecond the order is the client id's, not the creation's.
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-02-01T00:00:00.000Z'))
    const unnamed = await storage.apiClients.create(shop, Buffer.alloc(32), ['printers:read'])
    vi.setSystemTime(new Date('2026-02-01T00:00:00.001Z'))
    const named = (await createApiClient(storage, shop, ['print_jobs:read'], 'Warehouse')).client
    await createApiClient(storage, other, ['print_jobs:read'], 'Not ours')
    await storage.apiClients.revoke(unnamed.client_id, new Date('2026-03-01T00:00:00.000Z'))
    expect(await storage.apiClients.listForAccount(shop)).toEqual([
      {
        client_id: unnamed.client_id,
        account_id: shop,
        name: null,
        scopes: ['printers:read'],
        created_at: unnamed.created_at,
        revoked_at: '2026-03-01T00:00:00.000Z',
      },
      {
        client_id: named.client_id,
        account_id: shop,
        name: 'Warehouse',
        scopes: ['print_jobs:read'],
        created_at: named.created_at,
        revoked_at: null,
      },
    ])
  })
})

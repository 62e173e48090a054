import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { ENGINES, storageEngine, type TestStorage } from './engines.ts'

const KEY = '0123456789abcdef'
const digest = (c: string) => c.repeat(64)

describe.each(ENGINES)('served release catalogs on %s', (engine) => {
  const engineUnderTest = storageEngine(engine)
  let opened: TestStorage
  let storage: Storage

  beforeEach(async () => {
    opened = await engineUnderTest.open()
    storage = opened.storage
  })
  afterEach(() => opened.close())

  it('keeps the highest serial served per release key, with its digest; a lower one leaves it as it is', async () => {
    expect(await storage.servedCatalogs.highest(KEY)).toBeUndefined()
    expect(await storage.servedCatalogs.recordServed(KEY, { serial: 2, sha256: digest('a') })).toEqual({
      serial: 2,
      sha256: digest('a'),
    })
    expect(await storage.servedCatalogs.recordServed(KEY, { serial: 1, sha256: digest('b') })).toEqual({
      serial: 2,
      sha256: digest('a'),
    })
    expect(await storage.servedCatalogs.recordServed(KEY, { serial: 2, sha256: digest('c') })).toEqual({
      serial: 2,
      sha256: digest('a'),
    })
    expect(await storage.servedCatalogs.recordServed(KEY, { serial: 3, sha256: digest('d') })).toEqual({
      serial: 3,
      sha256: digest('d'),
    })
    expect(await storage.servedCatalogs.highest(KEY)).toEqual({ serial: 3, sha256: digest('d') })
    expect(await storage.servedCatalogs.highest('fedcba9876543210')).toBeUndefined()
  })
})

import { describe, expect, it } from 'vitest'
import { isUuid, timeOrderedUuid } from '../../cloud/uuid.ts'

describe('timeOrderedUuid', () => {
  it('is a version 7 UUID whose first 48 bits are the time in milliseconds (RFC 9562 §5.7)', () => {
    const id = timeOrderedUuid(0x0123456789ab)
    expect(id).toMatch(/^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(isUuid(id)).toBe(true)
  })

  it('sorts by time and differs within one millisecond', () => {
    const ids = [timeOrderedUuid(1_700_000_000_000), timeOrderedUuid(1_700_000_000_001)]
    expect([...ids].sort()).toEqual(ids)
    const same = new Set(Array.from({ length: 1000 }, () => timeOrderedUuid(1_700_000_000_000)))
    expect(same.size).toBe(1000)
  })
})

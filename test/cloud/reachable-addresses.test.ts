import { describe, expect, it } from 'vitest'
import { reachableAddresses } from '../../cloud/reachable-addresses.ts'

describe('the addresses the cloud ready line names', () => {
  it('is the listener itself when it is a specific address', () => {
    expect(reachableAddresses('127.0.0.2')).toEqual(['127.0.0.2'])
    expect(reachableAddresses('::1')).toEqual(['[::1]'])
  })

  it('is localhost and the machine’s own addresses for a wildcard listener, never the wildcard', () => {
    for (const wildcard of ['0.0.0.0', '::']) {
      const names = reachableAddresses(wildcard)
      expect(names[0]).toBe('localhost')
      expect(names).not.toContain(wildcard)
      expect(names.filter((n) => n.startsWith('127.') || n === '[::1]')).toEqual([])
    }
  })
})

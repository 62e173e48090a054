import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type IdPool, queryString, queryText } from './request-arbitraries.ts'

describe('query-string generators', () => {
  it('write a JSON object whose own key is toString or valueOf as its JSON text', () => {
    // fc.jsonValue makes such objects; String() on them throws "Cannot convert object to primitive value".
    expect(queryText({ toString: { a: 1 }, n: [] })).toBe('{"toString":{"a":1},"n":[]}')
    expect(queryText({ valueOf: 1 })).toBe('{"valueOf":1}')
    expect(queryText([1, 'a'])).toBe('1,a')
    expect(queryText(null)).toBe('null')
    expect(queryText(2.5)).toBe('2.5')
    expect(queryText('x y')).toBe('x y')
  })

  it('never throw while generating a well-formed query for a parameter of any schema', () => {
    // Seed 3 draws such an object within 2,000 runs (found by trying seeds against the String() mapper).
    const id = '0b7c54a5-3d2b-4c8e-9a43-1f2e3d4c5b6a'
    const pool: IdPool = {
      printers: [id],
      documents: [id],
      jobs: [id],
      agents: [id],
      installers: [],
      foreign: [id],
    }
    const query = queryString([{ name: 'filter', schema: {} }], pool, true)
    expect(() => fc.sample(query, { numRuns: 2000, seed: 3 })).not.toThrow()
  })
})

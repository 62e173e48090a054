import { describe, expect, it } from 'vitest'
import { dispositionFilename, documentFilename } from '../../../print-api/documents/filename.ts'

describe('dispositionFilename', () => {
  it.each([
    ['attachment; filename="label.pdf"', 'label.pdf'],
    ['attachment; filename=label.pdf', 'label.pdf'],
    ['inline; FILENAME="a \\"quoted\\" name.pdf"', 'a "quoted" name.pdf'],
    ["attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf", 'résumé.pdf'],
    ['attachment; filename="fallback.pdf"; filename*=utf-8\'en\'%E2%82%AC.pdf', '€.pdf'],
    ['attachment; filename="../../etc/passwd"', 'passwd'],
    ['attachment; filename="C:\\\\temp\\\\x.pdf"', 'x.pdf'],
    ['attachment; filename=".."', null],
    ['attachment', null],
  ])('%j → %j', (header, expected) => {
    expect(dispositionFilename(header)).toBe(expected)
  })
})

describe('documentFilename', () => {
  it('prefers Content-Disposition, else the last path segment', () => {
    const url = new URL('https://docs.example.com/a/Invoice%20042.pdf?x=1')
    expect(documentFilename('attachment; filename="other.pdf"', url)).toBe('other.pdf')
    expect(documentFilename(undefined, url)).toBe('Invoice 042.pdf')
    expect(documentFilename(undefined, new URL('https://docs.example.com/'))).toBeNull()
  })
})

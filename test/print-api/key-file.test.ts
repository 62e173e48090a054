import { execFile } from 'node:child_process'
import { readdirSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { keyFileText } from '../../print-api/key-file.ts'
import { tempDir } from '../helpers/temp-dir.ts'

const run = promisify(execFile)

describe('keyFileText', () => {
  let dir: ReturnType<typeof tempDir>
  beforeEach(() => {
    dir = tempDir('key-file-')
  })
  afterEach(() => dir.remove())

  it('makes the key once, mode 0600, and leaves no other file', () => {
    const file = path.join(dir.path, 'a.key')
    expect(keyFileText(file, () => 'first')).toBe('first')
    expect(keyFileText(file, () => 'second')).toBe('first')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir.path)).toEqual(['a.key'])
  })

  it('keeps a key that is already there', () => {
    const file = path.join(dir.path, 'b.key')
    writeFileSync(file, 'given', { mode: 0o644 })
    expect(keyFileText(file, () => 'made')).toBe('given')
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('gives processes making the same key at once the same whole key', async () => {
    const processes = 4
    const rounds = 100
    const racer = fileURLToPath(new URL('./key-file-racer.ts', import.meta.url))
    const start = Date.now() + 1500
    const read = await Promise.all(
      Array.from({ length: processes }, async () => {
        const { stdout } = await run(process.execPath, [
          '--import',
          'tsx',
          racer,
          dir.path,
          String(rounds),
          String(start),
          '3',
        ])
        return JSON.parse(stdout) as string[]
      }),
    )
    for (let round = 0; round < rounds; round += 1) {
      const texts = new Set(read.map((texts) => texts[round]))
      expect([...texts], `round ${round}`).toHaveLength(1)
      expect([...texts][0]).toMatch(new RegExp(`^key ${round} of \\d+$`))
    }
    expect(readdirSync(dir.path)).toHaveLength(rounds)
  }, 30_000)
})

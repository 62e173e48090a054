import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { putInCache } from '../../ota/cache-entry.ts'
import { tempDir } from '../helpers/temp-dir.ts'

/** Two `ota build`s filling an empty cache at once: the first to finish wins, nothing in place is removed. */
describe('putInCache', () => {
  const dirs: { path: string; remove(): void }[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })
  const cache = () => {
    const dir = tempDir('ota-cache-entry-')
    dirs.push(dir)
    return dir.path
  }
  const stage = (root: string, name: string, marker: string | null) => {
    const dir = path.join(root, name)
    mkdirSync(path.join(dir, 'bin'), { recursive: true })
    if (marker !== null) writeFileSync(path.join(dir, 'bin/node'), marker)
    return dir
  }
  const complete = (dir: string) => existsSync(path.join(dir, 'bin/node'))

  it('puts the staged directory in place when there is none', () => {
    const root = cache()
    const dir = path.join(root, 'node-linux-arm64-20.0.0')
    putInCache(stage(root, '.fetch-a', 'first'), dir, complete)
    expect(readFileSync(path.join(dir, 'bin/node'), 'utf8')).toBe('first')
  })

  it('keeps what another build put in place first, and leaves its own staged copy for its scratch clean-up', () => {
    const root = cache()
    const dir = path.join(root, 'node-linux-arm64-20.0.0')
    putInCache(stage(root, '.fetch-a', 'first'), dir, complete)
    const second = stage(root, '.fetch-b', 'second')
    putInCache(second, dir, complete)
    expect(readFileSync(path.join(dir, 'bin/node'), 'utf8')).toBe('first')
    expect(existsSync(second)).toBe(true)
  })

  it('replaces an incomplete directory a build of before left, moving it aside rather than deleting it', () => {
    const root = cache()
    const dir = path.join(root, 'node-linux-arm64-20.0.0')
    stage(root, 'node-linux-arm64-20.0.0', null)
    putInCache(stage(root, '.fetch-a', 'fresh'), dir, complete)
    expect(readFileSync(path.join(dir, 'bin/node'), 'utf8')).toBe('fresh')
    expect(readdirSync(root).filter((name) => name.includes('.stale-'))).toHaveLength(1)
  })
})

import { existsSync, readdirSync, readFileSync, renameSync, utimesSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type BlobStore, createBlobStore, sha256Of } from '../../../cloud/storage/blob-store.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

const SMALL = Buffer.from('\x1b@Hello\n\x1dVB\x00', 'latin1')
/** Over the 16 KiB written with synchronous calls: the store's other way. */
const LARGE = Buffer.concat([SMALL, Buffer.alloc(64 * 1024, 0x41)])
const HOUR = 3600_000

describe.each([
  ['small', SMALL],
  ['large', LARGE],
])('blob store, %s bytes: deleting a file no document names', (_size, BYTES) => {
  let dir: ReturnType<typeof tempDir>
  let blobs: BlobStore
  beforeEach(() => {
    dir = tempDir()
    blobs = createBlobStore(dir.path)
  })
  afterEach(() => dir.remove())

  /** Where the store keeps the bytes on disk (its layout, known here to age and move files). */
  const pathOf = (sha256: string) =>
    path.join(dir.path, 'documents', sha256.slice(0, 2), sha256.slice(2, 4), sha256)

  /** Makes the file look last used `ago` ms before now. */
  const age = (sha256: string, ago: number) => {
    const then = new Date(Date.now() - ago)
    utimesSync(pathOf(sha256), then, then)
  }
  const filesUnder = (sha256: string) => readdirSync(path.dirname(pathOf(sha256)))

  it('opens kept bytes as a stream with their size, and nothing for bytes it does not keep', async () => {
    const sha256 = await blobs.put(BYTES)
    const kept = await blobs.open(sha256)
    expect(kept?.size).toBe(BYTES.length)
    const chunks: Buffer[] = []
    for await (const chunk of kept?.stream ?? []) chunks.push(chunk as Buffer)
    expect(Buffer.concat(chunks)).toEqual(BYTES)
    expect(await blobs.open(sha256Of(Buffer.from('never kept')))).toBeUndefined()
  })

  it('deletes a file not used since the given moment, leaving nothing beside it', async () => {
    const sha256 = await blobs.put(BYTES)
    age(sha256, 2 * HOUR)

    expect(await blobs.deleteIfUnusedSince(sha256, Date.now() - HOUR)).toBe(true)

    expect(existsSync(pathOf(sha256))).toBe(false)
    expect(filesUnder(sha256)).toEqual([])
  })

  it('keeps a file that an intake of the same bytes reused since then, and deletes it once unused', async () => {
    const sha256 = await blobs.put(BYTES)
    age(sha256, 2 * HOUR)
    // A second document with the same bytes: the file is already there, so it is reused, not written.
    expect(await blobs.put(BYTES)).toBe(sha256)

    expect(await blobs.deleteIfUnusedSince(sha256, Date.now() - HOUR)).toBe(false)
    expect(readFileSync(pathOf(sha256))).toEqual(BYTES)
    expect(filesUnder(sha256)).toEqual([sha256])

    age(sha256, 2 * HOUR)
    expect(await blobs.deleteIfUnusedSince(sha256, Date.now() - HOUR)).toBe(true)
    expect(existsSync(pathOf(sha256))).toBe(false)
  })

  it('a staged PDF kept over an existing file also marks it used', async () => {
    const sha256 = await blobs.put(BYTES)
    age(sha256, 2 * HOUR)
    await blobs.keep(await blobs.stage(BYTES))

    expect(await blobs.deleteIfUnusedSince(sha256, Date.now() - HOUR)).toBe(false)
    expect(readFileSync(pathOf(sha256))).toEqual(BYTES)
    expect(readdirSync(path.join(dir.path, 'tmp'))).toEqual([])
  })

  it('an intake after the deletion writes the file again', async () => {
    const sha256 = await blobs.put(BYTES)
    age(sha256, 2 * HOUR)
    expect(await blobs.deleteIfUnusedSince(sha256, Date.now() - HOUR)).toBe(true)

    expect(await blobs.put(BYTES)).toBe(sha256)
    expect(readFileSync(pathOf(sha256))).toEqual(BYTES)
  })

  it('a missing file counts as deleted (another node got there first)', async () => {
    expect(await blobs.deleteIfUnusedSince(sha256Of(BYTES), Date.now())).toBe(true)
  })

  it('finishes a deletion that a crash interrupted after moving the file aside', async () => {
    const sha256 = await blobs.put(BYTES)
    age(sha256, 2 * HOUR)
    renameSync(pathOf(sha256), `${pathOf(sha256)}.deleting`)

    expect(await blobs.deleteIfUnusedSince(sha256, Date.now() - HOUR)).toBe(true)
    expect(filesUnder(sha256)).toEqual([])
  })
})

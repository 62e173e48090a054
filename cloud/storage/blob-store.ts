import { createHash, randomUUID } from 'node:crypto'
import { mkdir, open, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'

/** Kept bytes, opened for reading. */
export interface BlobReader {
  stream: Readable
  size: number
}

export interface StagedBlob {
  /** A private temporary file holding the bytes, for inspection before they are kept. */
  tempPath: string
  sha256: string
  size: number
}

/**
 * Document bytes on disk, addressed by their SHA-256 (`documents/ab/cd/<sha256>`), so the same bytes are
 * kept once however many documents name them. Bytes that must be inspected as a file are staged in a
 * temporary file first, then kept with an atomic rename or discarded; others are kept at once.
 *
 * Keeping bytes that are already there marks their file as just used. Housekeeping deletes a file only if it
 * was not used since a moment before it found that no document names it (`deleteIfUnusedSince`), so an
 * intake of the same bytes that is about to record its document never loses the file.
 */
export interface BlobStore {
  stage(bytes: Buffer): Promise<StagedBlob>
  keep(staged: StagedBlob): Promise<void>
  discard(staged: StagedBlob): Promise<void>
  /** Keeps bytes that need no file-based inspection; returns their SHA-256. */
  put(bytes: Buffer): Promise<string>
  /**
   * The kept bytes as a stream to read (the caller reads it to its end or destroys it), or undefined when
   * they are not kept. Callers never learn where the bytes live, so the store can move off the local disk.
   */
  open(sha256: string): Promise<BlobReader | undefined>
  /**
   * Deletes the file unless it was kept or reused at or after `since` (epoch ms); true when it is gone.
   * Safe to run on several nodes at once and to repeat after a crash.
   */
  deleteIfUnusedSince(sha256: string, since: number): Promise<boolean>
}

export function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export function createBlobStore(dataDir: string): BlobStore {
  const root = path.join(dataDir, 'documents')
  const staging = path.join(dataDir, 'tmp')
  const pathOf = (sha256: string) => path.join(root, sha256.slice(0, 2), sha256.slice(2, 4), sha256)
  const madeDirs = new Set<string>()
  const ensureDir = async (dir: string, mode?: number) => {
    if (madeDirs.has(dir)) return
    await mkdir(dir, { recursive: true, ...(mode !== undefined && { mode }) })
    madeDirs.add(dir)
  }
  const stage = async (bytes: Buffer, sha256 = sha256Of(bytes)): Promise<StagedBlob> => {
    await ensureDir(staging, 0o700)
    const tempPath = path.join(staging, `${randomUUID()}.part`)
    await writeFile(tempPath, bytes, { mode: 0o600 })
    return { tempPath, sha256, size: bytes.length }
  }
  const alreadyKept = async (sha256: string, size: number) => {
    const file = pathOf(sha256)
    const now = new Date()
    // Marks the file as used now; a file that housekeeping moved aside meanwhile is written again.
    if (!(await utimes(file, now, now).then(() => true, ignoreMissing))) return false
    return (await stat(file).catch(() => null))?.size === size
  }
  const keep = async (staged: StagedBlob) => {
    if (await alreadyKept(staged.sha256, staged.size)) {
      await rm(staged.tempPath, { force: true })
      return
    }
    const target = pathOf(staged.sha256)
    await ensureDir(path.dirname(target))
    await rename(staged.tempPath, target)
  }
  return {
    async open(sha256) {
      const handle = await open(pathOf(sha256), 'r').catch(ignoreMissing)
      if (!handle) return undefined
      try {
        const { size } = await handle.stat()
        return { stream: handle.createReadStream(), size }
      } catch (error) {
        await handle.close()
        throw error
      }
    },
    stage,
    keep,
    async discard(staged) {
      await rm(staged.tempPath, { force: true })
    },
    async put(bytes) {
      const sha256 = sha256Of(bytes)
      if (!(await alreadyKept(sha256, bytes.length))) await keep(await stage(bytes, sha256))
      return sha256
    },
    async deleteIfUnusedSince(sha256, since) {
      const file = pathOf(sha256)
      const aside = `${file}.deleting`
      // Moved aside first: from now on an intake of these bytes finds no file and writes it again.
      await rename(file, aside).catch(ignoreMissing)
      const moved = await stat(aside).catch(ignoreMissing)
      if (!moved) return true
      if (moved.mtimeMs >= since) {
        await rename(aside, file).catch(ignoreMissing)
        return false
      }
      await rm(aside, { force: true })
      return true
    },
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): false {
  if (error.code === 'ENOENT') return false
  throw error
}

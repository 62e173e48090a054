import { createHash, randomUUID } from 'node:crypto'
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'

export interface StagedBlob {
  /** A private temporary file holding the bytes, for inspection before they are kept. */
  tempPath: string
  sha256: string
  size: number
}

/**
 * Document bytes on disk, addressed by their SHA-256 (`documents/ab/cd/<sha256>`), so the same bytes are
 * kept once however many documents name them. Bytes are staged in a temporary file, inspected, then kept
 * with an atomic rename or discarded.
 */
export interface BlobStore {
  stage(bytes: Buffer): Promise<StagedBlob>
  keep(staged: StagedBlob): Promise<void>
  discard(staged: StagedBlob): Promise<void>
  pathOf(sha256: string): string
}

export function createBlobStore(dataDir: string): BlobStore {
  const root = path.join(dataDir, 'documents')
  const staging = path.join(dataDir, 'tmp')
  const pathOf = (sha256: string) => path.join(root, sha256.slice(0, 2), sha256.slice(2, 4), sha256)
  return {
    pathOf,
    async stage(bytes) {
      await mkdir(staging, { recursive: true, mode: 0o700 })
      const tempPath = path.join(staging, `${randomUUID()}.part`)
      await writeFile(tempPath, bytes, { mode: 0o600 })
      return { tempPath, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length }
    },
    async keep(staged) {
      const target = pathOf(staged.sha256)
      const existing = await stat(target).catch(() => null)
      if (existing?.size === staged.size) {
        await rm(staged.tempPath, { force: true })
        return
      }
      await mkdir(path.dirname(target), { recursive: true })
      await rename(staged.tempPath, target)
    },
    async discard(staged) {
      await rm(staged.tempPath, { force: true })
    },
  }
}

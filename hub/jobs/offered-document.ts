import { createHash } from 'node:crypto'
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { JobOffer } from '../../protocol/hub-messages.ts'

/**
 * The bytes an offer carries (`content_base64`), or null when it carries none or they are not the document
 * the offer names (wrong size or SHA-256).
 */
export function offeredBytes(document: JobOffer['document']): Buffer | null {
  if (document.content_base64 === undefined) return null
  const bytes = Buffer.from(document.content_base64, 'base64')
  if (bytes.length !== document.size_bytes) return null
  if (createHash('sha256').update(bytes).digest('hex') !== document.sha256) return null
  return bytes
}

/**
 * The document an offer carries (`content_base64`, a small one), kept where a download would keep it
 * (`dir/<sha256>`, as CloudClient.download): its path, or null when the offer carries none or its bytes are
 * not the document the offer names (wrong size or SHA-256), which is then downloaded. The spool already holds
 * the offer on disk, so the file is not synced: after a crash it is written again from the spool. The file
 * calls are synchronous: for at most OFFER_CONTENT_MAX_BYTES they take tens of microseconds, where each of
 * the five through libuv's thread pool took about 0.25 ms before the job's first byte (docs/performance.md).
 */
export async function keepOfferedDocument(
  dir: string,
  document: JobOffer['document'],
): Promise<string | null> {
  const bytes = offeredBytes(document)
  if (bytes === null) return null
  const target = path.join(dir, document.sha256)
  if (statSync(target, { throwIfNoEntry: false })?.size === bytes.length) return target
  mkdirSync(dir, { recursive: true })
  const temp = `${target}.${process.pid}.offered`
  writeFileSync(temp, bytes, { mode: 0o600 })
  renameSync(temp, target)
  return target
}

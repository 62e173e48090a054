import type { DocumentFormat, RawLanguage } from '../../protocol/enums.ts'
import { ApiError } from '../api-error.ts'
import { inspectRaw } from './raw-inspection/index.ts'
import { type ResolvedDocumentType, resolveDocumentType } from './sniff.ts'

export interface DeclaredDocument {
  format?: DocumentFormat | null
  rawLanguage?: RawLanguage | null
  filename?: string | null
}

export function tooLarge(limitBytes: number): ApiError {
  return new ApiError('document_too_large', `The document exceeds ${limitBytes} bytes.`, {
    limit_bytes: limitBytes,
  })
}

/**
 * The checks of a document's bytes that need nothing but the bytes, in the order the spec's answers need
 * (docs/printing-api.md, "order of checks"): its size, then its type (sniffed and matched with what was
 * declared), then, for RAW, the security inspection of its commands. A PDF's inspection (Ghostscript, on a
 * file) comes after, by the caller. Both the cloud and a hub's LAN API run them, so that both answer alike.
 */
export function checkDocumentBytes(
  bytes: Buffer,
  declared: DeclaredDocument,
  maxDocumentBytes: number,
  /** Between the size and the type: the cloud checks the account's storage quota there. */
  afterSize: () => Promise<void> = async () => {},
): Promise<ResolvedDocumentType> {
  if (bytes.length > maxDocumentBytes) throw tooLarge(maxDocumentBytes)
  if (bytes.length === 0) {
    throw new ApiError('validation_failed', 'The document is empty.', {
      fields: [{ field: 'document', message: 'must not be empty' }],
    })
  }
  return afterSize().then(() => {
    const type = resolveDocumentType(bytes, { format: declared.format, rawLanguage: declared.rawLanguage })
    if (type.format === 'raw' && type.rawLanguage) inspectRaw(bytes, type.rawLanguage)
    return type
  })
}

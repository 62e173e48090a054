import { createHash, randomUUID } from 'node:crypto'
import { mkdir, open, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { checkDocumentBytes, type DeclaredDocument } from '../../print-api/documents/document-checks.ts'
import type { PdfInspector } from '../../print-api/documents/pdf-inspection.ts'
import { checkPrintRoute } from '../../print-api/route-check.ts'
import type { Document } from '../../protocol/document.ts'
import { type JobIdempotency, type JobOffer, PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import {
  PRINT_OPTION_DEFAULTS,
  RENDERING_OPTION_KEYS,
  type ResolvedPrintOptions,
} from '../../protocol/print-job.ts'
import type { Printer } from '../../protocol/printer.ts'
import type { LanAcceptance, LanDocument, Spool, SpooledJob, SpoolState } from '../jobs/spool.ts'

/** A printer of this hub as the LAN API knows it: as the cloud shows it, and its key on the hub. */
export interface LanPrinter extends Printer {
  printer_key: string
}

export interface LanJobsOptions {
  spool: Spool
  /** Where the hub keeps documents by SHA-256 (the printer workers read them there). */
  documentsDir: string
  /** The hub's printers now. */
  printers(): LanPrinter[]
  pdfInspector: Pick<PdfInspector, 'inspect'>
  maxDocumentBytes: number
  /** A LAN job not started this long after it was taken fails `expired`, as a cloud offer does. */
  expirySeconds: number
  /** Wakes the worker of a printer whose queue gained a job. */
  wake(printerKey: string): void
  now?: () => Date
}

export interface NewLanJob {
  printerId: string
  document: Document
  /** The options as asked, resolved (route-check.ts, resolveOptions). */
  options: ResolvedPrintOptions
  clientId: string
  idempotency?: JobIdempotency
}

/**
 * What the LAN API does with documents and jobs (docs/lan-printing.md): a document is checked as the cloud
 * checks it (print-api/), kept in the hub's documents directory under its SHA-256, durably, before any job
 * names it; a job is checked against its printer as the cloud checks it, then taken by the spool in one
 * transaction with its Idempotency-Key (Spool.acceptLan), which also tells the cloud of it.
 */
export class LanJobs {
  readonly #o: LanJobsOptions
  readonly #now: () => Date

  constructor(options: LanJobsOptions) {
    this.#o = options
    this.#now = options.now ?? (() => new Date())
  }

  /** The hub's printer with this id, or undefined. */
  printer(printerId: string): LanPrinter | undefined {
    return this.#o.printers().find((printer) => printer.printer_id === printerId)
  }

  printers(): LanPrinter[] {
    return this.#o.printers()
  }

  /** Checks a document's bytes, then keeps them: the document as the API shows it. */
  async storeDocument(bytes: Buffer, declared: DeclaredDocument, clientId: string): Promise<LanDocument> {
    const type = await checkDocumentBytes(bytes, declared, this.#o.maxDocumentBytes)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const file = await this.#keep(bytes, sha256)
    if (type.format === 'pdf') await this.#o.pdfInspector.inspect(file, `lan:${clientId}`)
    const document: LanDocument = {
      document_id: randomUUID(),
      sha256,
      size_bytes: bytes.length,
      format: type.format,
      raw_language: type.rawLanguage,
      mime_type: type.mimeType,
      filename: declared.filename ?? null,
      created_at: this.#now().toISOString(),
    }
    this.#o.spool.addDocument(document)
    return document
  }

  /** A document uploaded on this hub's LAN, as the API shows it; undefined for any other id. */
  document(documentId: string): Document | undefined {
    const kept = this.#o.spool.findDocument(documentId)
    return kept && documentOf(kept)
  }

  /**
   * Checks the job against its printer, then has the spool take it: created, or the job the same
   * Idempotency-Key already names (replayed), or a conflict (the key was used with another request).
   */
  createJob(job: NewLanJob): LanAcceptance {
    const printer = this.printer(job.printerId)
    if (!printer) throw new Error('createJob: the printer was checked by the caller')
    checkPrintRoute(printer, job.document, job.options)
    const now = this.#now()
    const offered = { ...job.options }
    // As the cloud offers a RAW job (cloud/dispatch/job-offer.ts): it is printed as it is.
    if (job.document.document_format === 'raw')
      for (const key of RENDERING_OPTION_KEYS) Object.assign(offered, { [key]: PRINT_OPTION_DEFAULTS[key] })
    const offer: JobOffer = {
      v: PROTOCOL_VERSION,
      print_job_id: randomUUID(),
      printer_id: printer.printer_id,
      printer_key: printer.printer_key,
      document: {
        document_id: job.document.document_id,
        url: `lan:${job.document.document_id}`,
        sha256: job.document.sha256,
        size_bytes: job.document.size_bytes,
        format: job.document.document_format,
        raw_language: job.document.document_raw_language,
      },
      options: offered,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.#o.expirySeconds * 1000).toISOString(),
      ...(job.idempotency && { idempotency: job.idempotency }),
    }
    const taken = this.#o.spool.acceptLan(
      offer,
      {
        client_id: job.clientId,
        options: job.options,
        mime_type: job.document.document_mime_type,
        filename: job.document.filename,
      },
      now,
    )
    if (taken.outcome === 'created') this.#o.wake(printer.printer_key)
    return taken
  }

  /** The job an Idempotency-Key names on this hub, and the fingerprint of the request it was made by. */
  held(idempotency: JobIdempotency): { job: SpooledJob; fingerprint: string } | undefined {
    return this.#o.spool.findByKey(idempotency.endpoint, idempotency.key)
  }

  /**
   * Cancels a job that has not started (Spool.cancelOnLan): its state afterwards, or undefined for a job this
   * hub does not hold. Its printer's worker is woken, as after the cloud's cancel.
   */
  cancel(printJobId: string): SpoolState | undefined {
    const state = this.#o.spool.cancelOnLan(printJobId, this.#now())
    const job = this.#o.spool.find(printJobId)
    if (job) this.#o.wake(job.printer_key)
    return state
  }

  /** A job this hub holds (taken on its LAN, or offered by the cloud). */
  job(printJobId: string): SpooledJob | undefined {
    return this.#o.spool.find(printJobId)
  }

  /** The document's bytes in the documents directory, written whole and synced before it is named anywhere. */
  async #keep(bytes: Buffer, sha256: string): Promise<string> {
    const { documentsDir } = this.#o
    const target = path.join(documentsDir, sha256)
    if ((await stat(target).catch(() => null))?.size === bytes.length) return target
    await mkdir(documentsDir, { recursive: true })
    const temp = `${target}.${process.pid}.${randomUUID()}.part`
    const file = await open(temp, 'w', 0o600)
    try {
      await file.writeFile(bytes)
      await file.sync()
    } catch (error) {
      await file.close()
      await rm(temp, { force: true })
      throw error
    }
    await file.close()
    await rename(temp, target)
    return target
  }
}

/** A LAN document as the API shows it (protocol/document.ts). */
export function documentOf(kept: LanDocument): Document {
  return {
    document_id: kept.document_id,
    document_mime_type: kept.mime_type,
    document_format: kept.format,
    document_raw_language: kept.raw_language,
    size_bytes: kept.size_bytes,
    sha256: kept.sha256,
    filename: kept.filename,
    created_at: kept.created_at,
  }
}

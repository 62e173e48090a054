import type { RawLanguage } from '../../protocol/enums.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { Printer } from '../../protocol/printer.ts'

/** What a backend does with the public API, for end-to-end tests. */
export class ApiClient {
  constructor(
    private baseUrl: string,
    private readonly token: string,
  ) {}

  setBaseUrl(url: string): void {
    this.baseUrl = url
  }

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as T }
  }

  async printers(): Promise<Printer[]> {
    return (await this.request<{ data: Printer[] }>('GET', '/api/v1/printers?limit=100')).body.data
  }

  async printRaw(
    printerId: string,
    bytes: Buffer,
    language: RawLanguage,
    extra: Record<string, unknown> = {},
  ) {
    const res = await this.request<PrintJob>('POST', '/api/v1/print-jobs/from-base64', {
      printer_id: printerId,
      document_base64: bytes.toString('base64'),
      document_format: 'raw',
      document_raw_language: language,
      ...extra,
    })
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`)
    return res.body
  }

  /**
   * A RAW job of a document uploaded first (POST /api/v1/documents, then POST /api/v1/print-jobs): its offer
   * carries no bytes, so the hub downloads the document.
   */
  async printUploaded(printerId: string, bytes: Buffer, language: RawLanguage) {
    const form = new FormData()
    form.append('document_format', 'raw')
    form.append('document_raw_language', language)
    form.append('file', new Blob([bytes]), 'document.bin')
    const upload = await fetch(`${this.baseUrl}/api/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}` },
      body: form,
    })
    const document = (await upload.json()) as { document_id: string }
    if (upload.status !== 201)
      throw new Error(`upload answered ${upload.status}: ${JSON.stringify(document)}`)
    const res = await this.request<PrintJob>('POST', '/api/v1/print-jobs', {
      printer_id: printerId,
      document_id: document.document_id,
    })
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`)
    return res.body
  }

  /** A PDF job from Base64 (`document_format: 'pdf'`); `options` are print options (copies, media, dpi ...). */
  async printPdf(printerId: string, pdf: Buffer, options: Record<string, unknown> = {}) {
    const res = await this.request<PrintJob>('POST', '/api/v1/print-jobs/from-base64', {
      printer_id: printerId,
      document_base64: pdf.toString('base64'),
      document_format: 'pdf',
      ...options,
    })
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`)
    return res.body
  }

  /** Every print job of the account, page after page (newest first). */
  async allJobs(): Promise<PrintJob[]> {
    const jobs: PrintJob[] = []
    let cursor: string | null = null
    do {
      const page: { status: number; body: { data: PrintJob[]; next_cursor: string | null } } =
        await this.request('GET', `/api/v1/print-jobs?limit=100${cursor ? `&cursor=${cursor}` : ''}`)
      if (page.status !== 200) throw new Error(`listing print jobs answered ${page.status}`)
      jobs.push(...page.body.data)
      cursor = page.body.next_cursor
    } while (cursor)
    return jobs
  }

  async job(printJobId: string): Promise<PrintJob> {
    return (await this.request<PrintJob>('GET', `/api/v1/print-jobs/${printJobId}`)).body
  }

  /** Polls until the job reaches one of `statuses` (spec: poll at a bounded interval). */
  async waitForJob(
    printJobId: string,
    statuses: PrintJob['status'][],
    timeoutMs = 20_000,
  ): Promise<PrintJob> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const job = await this.job(printJobId)
      if (statuses.includes(job.status)) return job
      if (Date.now() > deadline)
        throw new Error(`job ${printJobId} is ${job.status}, not ${statuses.join('/')}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  async waitForPrinters(count: number, timeoutMs = 20_000): Promise<Printer[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const printers = (await this.printers()).filter((p) => p.online)
      if (printers.length >= count) return printers
      if (Date.now() > deadline) throw new Error(`only ${printers.length} of ${count} printers online`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

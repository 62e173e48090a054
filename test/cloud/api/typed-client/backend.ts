import createClient, { type Middleware } from 'openapi-fetch'
// Types generated from the served /openapi.json by typed-client.test.ts, which type-checks this file
// against them (the project's own type check sees the stand-in declared in generated-openapi.d.ts).
import type { components, paths } from 'print-hub-openapi'

// A customer's backend written against the generated client, as an integrator would: no casts, every
// request and answer typed by the document.

export type PrintJob = components['schemas']['PrintJob']
export type Printer = components['schemas']['Printer']
export type StoredDocument = components['schemas']['Document']
export type ApiError = components['schemas']['Error']
type DocumentFormat = components['schemas']['DocumentFormat']
type RawLanguage = components['schemas']['RawLanguage']

export interface BackendOptions {
  baseUrl: string
  clientId: string
  clientSecret: string
  /** Sees every answer (the test validates each against the document). */
  observer: Middleware
}

/** A failed call, with the service's error body. */
export class PrintServiceError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(`${status} ${body.error_code}: ${body.message}`)
  }
}

function check<T>(result: { data?: T; error?: ApiError; response: Response }): T {
  if (result.error !== undefined) throw new PrintServiceError(result.response.status, result.error)
  if (result.data === undefined) throw new Error(`no body in a ${result.response.status} answer`)
  return result.data
}

export class PrintServiceBackend {
  private readonly client
  private accessToken: string | null = null

  constructor(private readonly options: BackendOptions) {
    this.client = createClient<paths>({ baseUrl: options.baseUrl })
    this.client.use({
      onRequest: ({ request }) => {
        if (this.accessToken !== null && !request.url.endsWith('/oauth/token')) {
          request.headers.set('Authorization', `Bearer ${this.accessToken}`)
        }
        return request
      },
    })
    this.client.use(options.observer)
  }

  /** OAuth 2.0 client credentials (RFC 6749 §4.4): a form body, answered with a bearer token. */
  async authenticate(): Promise<{ scope: string; expiresIn: number }> {
    const token = check(
      await this.client.POST('/oauth/token', {
        body: {
          grant_type: 'client_credentials',
          client_id: this.options.clientId,
          client_secret: this.options.clientSecret,
        },
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        bodySerializer: (body) => {
          const form = new URLSearchParams()
          for (const [name, value] of Object.entries(body))
            if (value !== undefined) form.set(name, String(value))
          return form
        },
      }),
    )
    this.accessToken = token.access_token
    return { scope: token.scope, expiresIn: token.expires_in }
  }

  async printers(): Promise<Printer[]> {
    return check(await this.client.GET('/api/v1/printers', { params: { query: { limit: 100 } } })).data
  }

  /** A multipart upload; the file part carries the bytes and a name. */
  async upload(
    bytes: Uint8Array,
    filename: string,
    format: DocumentFormat,
    rawLanguage: RawLanguage,
  ): Promise<StoredDocument> {
    return check(
      await this.client.POST('/api/v1/documents', {
        body: { file: new Blob([bytes]), document_format: format, document_raw_language: rawLanguage },
        bodySerializer: (body) => {
          const form = new FormData()
          if (body.document_format) form.set('document_format', body.document_format)
          if (body.document_raw_language) form.set('document_raw_language', body.document_raw_language)
          form.set('file', body.file, filename)
          return form
        },
      }),
    )
  }

  async printDocument(documentId: string, printerId: string, orderId: string): Promise<PrintJob> {
    return check(
      await this.client.POST('/api/v1/print-jobs', {
        params: { header: { 'idempotency-key': `${orderId}-document` } },
        body: { document_id: documentId, printer_id: printerId, copies: 2, intent: 'receipt' },
      }),
    )
  }

  async printUrl(url: string, printerId: string, orderId: string): Promise<PrintJob> {
    return check(
      await this.client.POST('/api/v1/print-jobs/from-url', {
        params: { header: { 'idempotency-key': `${orderId}-url` } },
        body: {
          document_url: url,
          document_format: 'raw',
          document_raw_language: 'escpos',
          printer_id: printerId,
        },
      }),
    )
  }

  async printBase64(bytes: Uint8Array, printerId: string, orderId: string): Promise<PrintJob> {
    return check(
      await this.client.POST('/api/v1/print-jobs/from-base64', {
        params: { header: { 'idempotency-key': `${orderId}-base64`, 'X-Request-Id': `order-${orderId}` } },
        body: {
          document_base64: Buffer.from(bytes).toString('base64'),
          document_format: 'raw',
          document_raw_language: 'escpos',
          printer_id: printerId,
          media_width_mm: 80,
        },
      }),
    )
  }

  async job(printJobId: string): Promise<PrintJob> {
    return check(
      await this.client.GET('/api/v1/print-jobs/{printJobId}', { params: { path: { printJobId } } }),
    )
  }

  /** Polls until printed, failed or cancelled (spec: polling guidance), at most `maxPolls` times. */
  async waitUntilFinished(printJobId: string, maxPolls: number, intervalMs: number): Promise<PrintJob> {
    for (let poll = 1; ; poll++) {
      const job = await this.job(printJobId)
      if (job.status === 'printed' || job.status === 'failed' || job.status === 'cancelled') return job
      if (poll >= maxPolls) return job
      await new Promise((resolve) => setTimeout(resolve, intervalMs))
    }
  }

  /** Every job of a status, following `next_cursor` page by page. */
  async jobs(status: PrintJob['status'], pageSize: number): Promise<PrintJob[]> {
    const jobs: PrintJob[] = []
    let cursor: string | undefined
    do {
      const page = check(
        await this.client.GET('/api/v1/print-jobs', {
          params: { query: { status, limit: pageSize, ...(cursor !== undefined && { cursor }) } },
        }),
      )
      jobs.push(...page.data)
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    return jobs
  }

  /** 200: cancelled; 202: requested, the hub has not confirmed yet. */
  async cancel(printJobId: string): Promise<{ confirmed: boolean; job: PrintJob }> {
    const result = await this.client.POST('/api/v1/print-jobs/{printJobId}/cancel', {
      params: { path: { printJobId } },
    })
    return { confirmed: result.response.status === 200, job: check(result) }
  }
}

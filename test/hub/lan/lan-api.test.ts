import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Spool } from '../../../hub/jobs/spool.ts'
import { buildLanApi } from '../../../hub/lan/lan-api.ts'
import { LanCredentials } from '../../../hub/lan/lan-credentials.ts'
import { LanJobs, type LanPrinter } from '../../../hub/lan/lan-jobs.ts'
import { createPdfInspector, type PdfInspector } from '../../../print-api/documents/pdf-inspection.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import type { Scope } from '../../../protocol/enums.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import type { Printer } from '../../../protocol/printer.ts'
import {
  ALL_SCOPES,
  ESCPOS_RECEIPT,
  startTestCloud,
  type TestAccount,
  type TestCloud,
} from '../../cloud/test-cloud.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { handWrittenPdf } from '../../print-api/documents/pdf-fixtures.ts'
import { signCloudToken, signingKey } from './cloud-tokens.ts'

const ISSUER = 'http://127.0.0.1:8080'
const TILL_SECRET = `cs_${'t'.repeat(43)}`
const FROM_BASE64 = '/api/v1/print-jobs/from-base64'

/**
 * The hub's LAN print API (hub/lan/lan-api.ts) on a real spool and real credentials, beside a real cloud whose
 * account has the same printers: the same bad requests get the same answers from both.
 */
describe('the LAN print API', () => {
  let cloud: TestCloud
  let account: TestAccount
  let cloudToken: string
  let dir: ReturnType<typeof tempDir>
  let spool: Spool
  let lan: FastifyInstance
  let pdfInspector: PdfInspector
  let printers: LanPrinter[]
  const tillId = randomUUID()
  const officeId = randomUUID()
  let tillToken: string
  let officeToken: string
  const woken: string[] = []

  beforeAll(async () => {
    cloud = await startTestCloud()
    account = await cloud.createAccount()
    cloudToken = await account.token()
    const listed = await cloud.app.inject({
      url: '/api/v1/printers',
      headers: { authorization: `Bearer ${cloudToken}` },
    })
    printers = (listed.json() as { data: Printer[] }).data.map((printer) => ({
      ...printer,
      printer_key: `socket://127.0.0.1:9100?p=${printer.printer_id}`,
    }))
    dir = tempDir('lan-api-')
    spool = new Spool(path.join(dir.path, 'spool.sqlite'))
    const key = await signingKey()
    const credentials = new LanCredentials({
      dataDir: dir.path,
      agentId: account.agentId,
      accountId: account.accountId,
    })
    const client = (id: string, scopes: Scope[], secret: string) => ({
      client_id: id,
      scopes,
      secret_sha256: hashSecret(secret).toString('hex'),
    })
    await credentials.refresh(async () => ({
      lan_api_enabled: true,
      printers: [],
      issuer: ISSUER,
      token_keys: { keys: [key.jwk] },
      clients: [client(tillId, ALL_SCOPES, TILL_SECRET), client(officeId, ['printers:read'], 'cs_office')],
      generated_at: new Date().toISOString(),
    }))
    const token = (clientId: string, scope: string) =>
      signCloudToken({ key, issuer: ISSUER, clientId, accountId: account.accountId, scope })
    tillToken = await token(tillId, ALL_SCOPES.join(' '))
    officeToken = await token(officeId, 'printers:read')
    pdfInspector = createPdfInspector({
      timeoutMs: 30_000,
      maxConcurrent: 1,
      maxQueued: 8,
      maxQueuedPerAccount: 8,
    })
    lan = await buildLanApi({
      jobs: new LanJobs({
        spool,
        documentsDir: path.join(dir.path, 'documents'),
        printers: () => printers,
        pdfInspector,
        maxDocumentBytes: cloud.config.maxDocumentBytes,
        expirySeconds: 3600,
        wake: (printerKey) => woken.push(printerKey),
      }),
      credentials,
      maxDocumentBytes: cloud.config.maxDocumentBytes,
    })
  })
  afterAll(async () => {
    await lan?.close()
    pdfInspector?.close()
    spool?.close()
    dir?.remove()
    await cloud?.close()
  })

  const receipt = (overrides: Record<string, unknown> = {}) => ({
    printer_id: account.receiptPrinterId,
    document_base64: ESCPOS_RECEIPT.toString('base64'),
    document_format: 'raw',
    document_raw_language: 'escpos',
    ...overrides,
  })
  const onLan = (method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}) =>
    lan.inject({
      method,
      url,
      headers: { authorization: `Bearer ${tillToken}`, ...headers },
      ...(body !== undefined && { payload: body as object }),
    })
  const onCloud = (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    cloud.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${cloudToken}`, ...headers },
      ...(body !== undefined && { payload: body as object }),
    })
  const answer = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: res.json() as unknown })

  it('takes a RAW job: 201 with the job as the cloud shows one, its bytes kept, the cloud told, the printer woken', async () => {
    const res = await onLan('POST', FROM_BASE64, receipt({ copies: 2 }))
    expect(res.statusCode, res.body).toBe(201)
    const job = res.json() as PrintJob
    expect(job).toMatchObject({
      printer_id: account.receiptPrinterId,
      status: 'reserved',
      document_format: 'raw',
      document_raw_language: 'escpos',
      document_mime_type: 'application/vnd.epson-escpos',
      copies: 2,
      failure_reason: null,
    })
    const held = spool.find(job.print_job_id)
    expect(held).toMatchObject({ state: 'queued', origin: 'lan' })
    expect(readFileSync(path.join(dir.path, 'documents', held?.offer.document.sha256 ?? ''))).toEqual(
      ESCPOS_RECEIPT,
    )
    expect(woken.at(-1)).toBe(held?.printer_key)
    const told = spool
      .outbox()
      .filter((m) => m.topic === 'lan-job' && m.payload.print_job_id === job.print_job_id)
    expect(told).toHaveLength(1)
    expect(told[0]?.payload).toMatchObject({ client_id: tillId, status: 'reserved' })
    expect(answer(await onLan('GET', `/api/v1/print-jobs/${job.print_job_id}`))).toStrictEqual({
      status: 200,
      body: job,
    })
  })

  it('answers the same request with the same key with its job (Idempotent-Replayed), another with 409', async () => {
    const key = { 'idempotency-key': `order-${randomUUID()}` }
    const first = await onLan('POST', FROM_BASE64, receipt(), key)
    const again = await onLan('POST', FROM_BASE64, receipt(), key)
    expect([first.statusCode, again.statusCode]).toEqual([201, 201])
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect((again.json() as PrintJob).print_job_id).toBe((first.json() as PrintJob).print_job_id)
    const other = await onLan('POST', FROM_BASE64, receipt({ copies: 3 }), key)
    expect(answer(other)).toStrictEqual({
      status: 409,
      body: {
        error: 'conflict',
        error_code: 'idempotency_key_conflict',
        message: 'This Idempotency-Key was already used with a different request.',
      },
    })
  })

  it('prints an uploaded document by its id, and a PDF after Ghostscript inspected it', async () => {
    const form = new FormData()
    form.append(
      'file',
      new Blob([handWrittenPdf(['0 0 m 100 100 l S'])], { type: 'application/pdf' }),
      'invoice.pdf',
    )
    const request = new Request('http://lan/', { method: 'POST', body: form })
    const uploaded = await lan.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: {
        authorization: `Bearer ${tillToken}`,
        'content-type': request.headers.get('content-type') ?? '',
      },
      payload: Buffer.from(await request.arrayBuffer()),
    })
    expect(uploaded.statusCode, uploaded.body).toBe(201)
    const document = uploaded.json() as { document_id: string; document_format: string; filename: string }
    expect(document).toMatchObject({ document_format: 'pdf', filename: 'invoice.pdf' })
    const res = await onLan('POST', '/api/v1/print-jobs', {
      printer_id: account.receiptPrinterId,
      document_id: document.document_id,
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({
      document_id: document.document_id,
      document_mime_type: 'application/pdf',
    })
  })

  it('cancels a job that has not started, and refuses one that has, with its status', async () => {
    const queued = (await onLan('POST', FROM_BASE64, receipt())).json() as PrintJob
    const cancelled = await onLan('POST', `/api/v1/print-jobs/${queued.print_job_id}/cancel`)
    expect(cancelled.statusCode).toBe(200)
    expect(cancelled.json()).toMatchObject({ status: 'cancelled' })
    const started = (await onLan('POST', FROM_BASE64, receipt())).json() as PrintJob
    spool.startPrinting(started.print_job_id)
    expect(answer(await onLan('POST', `/api/v1/print-jobs/${started.print_job_id}/cancel`))).toStrictEqual({
      status: 409,
      body: {
        error: 'conflict',
        error_code: 'print_job_not_cancellable',
        message: 'The job is printing: only a job that has not started can be cancelled.',
        details: { status: 'printing' },
      },
    })
  })

  it('lists the hub’s printers as the cloud lists them', async () => {
    const onHub = answer(await onLan('GET', '/api/v1/printers'))
    expect(onHub).toStrictEqual(answer(await onCloud('GET', '/api/v1/printers')))
  })

  it('checks scopes, and refuses a missing or unknown bearer with the challenge', async () => {
    const office = await lan.inject({
      method: 'POST',
      url: FROM_BASE64,
      headers: { authorization: `Bearer ${officeToken}` },
      payload: receipt(),
    })
    expect(office.statusCode).toBe(403)
    expect(office.json()).toMatchObject({ error_code: 'insufficient_scope' })
    expect(
      (await onLan('GET', '/api/v1/printers', undefined, { authorization: `Bearer ${officeToken}` }))
        .statusCode,
    ).toBe(200)
    const none = await lan.inject({ method: 'GET', url: '/api/v1/printers' })
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="print-hub"')
    const unknown = await onLan('GET', '/api/v1/printers', undefined, {
      authorization: `Bearer ${cloudToken}`,
    })
    expect(unknown.statusCode).toBe(401)
    expect(unknown.json()).toMatchObject({ error_code: 'invalid_token' })
  })

  it('issues a token for the client’s secret that its routes take', async () => {
    const res = await lan.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${tillId}&client_secret=${TILL_SECRET}`,
    })
    expect(res.statusCode, res.body).toBe(200)
    const { access_token } = res.json() as { access_token: string }
    const listed = await onLan('GET', '/api/v1/printers', undefined, {
      authorization: `Bearer ${access_token}`,
    })
    expect(listed.statusCode).toBe(200)
    const wrong = await lan.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${tillId}&client_secret=wrong`,
    })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json()).toMatchObject({ error_code: 'invalid_client' })
  })

  describe('answers bad requests exactly as the cloud does', () => {
    const unknownJob = randomUUID()
    const cases: [string, 'GET' | 'POST', string, unknown, Record<string, string>?][] = [
      [
        'a body that is not JSON',
        'POST',
        FROM_BASE64,
        '{"printer_id":',
        { 'content-type': 'application/json' },
      ],
      ['a text/plain body', 'POST', FROM_BASE64, 'hello', { 'content-type': 'text/plain' }],
      ['Base64 that is not', 'POST', FROM_BASE64, { document_base64: 'not base64!' }],
      [
        'a data: URL for Base64',
        'POST',
        FROM_BASE64,
        { document_base64: 'data:application/pdf;base64,JVBERi0=' },
      ],
      ['an unknown field', 'POST', FROM_BASE64, { colour: 'red' }],
      ['copies out of range', 'POST', FROM_BASE64, { copies: 0 }],
      ['an unknown printer', 'POST', FROM_BASE64, { printer_id: unknownJob }],
      ['bytes that contradict the declared language', 'POST', FROM_BASE64, { document_raw_language: 'zpl' }],
      ['a language the printer does not speak', 'POST', FROM_BASE64, { printer_id: 'LABEL' }],
      [
        'an Idempotency-Key of 129 characters',
        'POST',
        FROM_BASE64,
        {},
        { 'idempotency-key': 'k'.repeat(129) },
      ],
      ['an unknown job', 'GET', `/api/v1/print-jobs/${unknownJob}`, undefined],
      ['a job id that is not a uuid', 'GET', '/api/v1/print-jobs/42', undefined],
      ['a cancel of an unknown job', 'POST', `/api/v1/print-jobs/${unknownJob}/cancel`, undefined],
      ['an unknown route', 'GET', '/api/v1/nothing-here', undefined],
    ]
    it.each(cases)('%s', async (_name, method, url, body, headers = {}) => {
      const fields = body as Record<string, unknown>
      const payload =
        body !== null && typeof body === 'object' && url === FROM_BASE64
          ? receipt({
              ...fields,
              ...(fields.printer_id === 'LABEL' && { printer_id: account.labelPrinterId }),
            })
          : body
      const hub = answer(await onLan(method, url, payload, headers))
      const there = answer(await onCloud(method, url, payload, headers))
      // The document a route refusal names is the one each side stored.
      const masked = (a: { status: number; body: unknown }) =>
        JSON.parse(JSON.stringify(a).replace(/"document_id":"[^"]+"/, '"document_id":"…"'))
      expect(masked(hub)).toStrictEqual(masked(there))
      expect(hub.status).toBeGreaterThanOrEqual(400)
    })
  })
})

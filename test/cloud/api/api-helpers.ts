import type { AddressInfo } from 'node:net'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { Storage } from '../../../cloud/storage/storage.ts'
import { generateSecret, hashSecret } from '../../../print-api/secrets.ts'
import type { Scope } from '../../../protocol/enums.ts'
import { ERROR_CODES, type ErrorCode } from '../../../protocol/errors.ts'
import type { PrintJob } from '../../../protocol/print-job.ts'
import { ALL_SCOPES, ESCPOS_RECEIPT, issueToken, type TestCloud } from '../test-cloud.ts'

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** Listens on an ephemeral loopback port and returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

/** The spec's error body, exactly: error (the catalogue's class for the code), error_code, message, details. */
export function expectErrorBody(body: unknown, code: ErrorCode, details?: Record<string, unknown>): void {
  const expected: Record<string, unknown> = {
    error: ERROR_CODES[code].error,
    error_code: code,
    message: expect.any(String),
  }
  if (details !== undefined) expected.details = details
  expect(body).toStrictEqual(expected)
  expect((body as { message: string }).message.length).toBeGreaterThan(0)
}

/** An injected response: the status, JSON content type and error body of `code`. */
export function expectInjectedError(
  res: LightMyRequestResponse,
  code: ErrorCode,
  details?: Record<string, unknown>,
): void {
  expect(res.statusCode).toBe(ERROR_CODES[code].status)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  expectErrorBody(res.json(), code, details)
}

/** A fetched response: the status, JSON content type and error body of `code`. */
export async function expectFetchedError(
  res: Response,
  code: ErrorCode,
  details?: Record<string, unknown>,
): Promise<void> {
  expect(res.status).toBe(ERROR_CODES[code].status)
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
  expectErrorBody(await res.json(), code, details)
}

/** One offending field of a 422 `validation_failed`. */
export const field = (name: string, location: string) => ({
  field: name,
  message: expect.any(String),
  location,
})

export interface BareAccount {
  accountId: string
  clientId: string
  clientSecret: string
  agentId: string
  token(scopes?: Scope[]): Promise<string>
}

/** An account with one API client and one agent but no printers, so a test controls every listed item. */
export async function bareAccount(
  storage: Storage,
  name = 'Bare shop',
  scopes: Scope[] = ALL_SCOPES,
): Promise<BareAccount> {
  const account = await storage.accounts.create(name)
  const clientSecret = generateSecret('cs')
  const client = await storage.apiClients.create(account.account_id, hashSecret(clientSecret), scopes)
  const agent = await storage.agents.insert({ account_id: account.account_id, name: 'Hub' })
  return {
    accountId: account.account_id,
    clientId: client.client_id,
    clientSecret,
    agentId: agent.agent_id,
    token: (tokenScopes = scopes) => issueToken(storage, account.account_id, client.client_id, tokenScopes),
  }
}

/** A token of the client `clientId` that expired a second ago. */
export async function expiredToken(storage: Storage, accountId: string, clientId: string): Promise<string> {
  const token = generateSecret('pat')
  await storage.apiClients.storeToken(hashSecret(token), {
    account_id: accountId,
    client_id: clientId,
    scopes: [...ALL_SCOPES],
    expires_at: Date.now() - 1000,
  })
  return token
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The body of POST /api/v1/print-jobs/from-base64 for a small ESC/POS receipt on `printerId`. */
const receiptJobBody = (printerId: string) => ({
  document_base64: ESCPOS_RECEIPT.toString('base64'),
  document_format: 'raw',
  document_raw_language: 'escpos',
  printer_id: printerId,
})

/** Creates a print job of a small ESC/POS receipt through from-base64 and returns it (asserting the 201). */
export async function createReceiptJob(
  cloud: TestCloud,
  token: string,
  printerId: string,
): Promise<PrintJob> {
  const res = await cloud.app.inject({
    method: 'POST',
    url: '/api/v1/print-jobs/from-base64',
    headers: bearer(token),
    payload: receiptJobBody(printerId),
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json() as PrintJob
}

/** As createReceiptJob, over HTTP to a listening cloud at `apiUrl`. */
export async function postReceiptJob(apiUrl: string, token: string, printerId: string): Promise<PrintJob> {
  const res = await fetch(`${apiUrl}/api/v1/print-jobs/from-base64`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify(receiptJobBody(printerId)),
  })
  expect(res.status).toBe(201)
  return (await res.json()) as PrintJob
}

/** A Unix time in whole seconds. */
export const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Asserts the five 429 headers of the spec (Errors) for a quota `limit` named `scope`. */
export function expectRateLimitHeaders(
  get: (name: string) => string | null | undefined,
  limit: number,
  scope: string,
  windowSeconds: number,
): void {
  const retryAfter = get('retry-after')
  expect(retryAfter).toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds)
  expect(get('x-ratelimit-limit')).toBe(String(limit))
  expect(get('x-ratelimit-remaining')).toBe('0')
  const reset = get('x-ratelimit-reset')
  expect(reset).toMatch(/^\d+$/)
  // A Unix timestamp in seconds (not milliseconds, not a delta): after now, within one window of now.
  expect(Number(reset)).toBeGreaterThan(nowSeconds())
  expect(Number(reset)).toBeLessThanOrEqual(nowSeconds() + windowSeconds + 1)
  expect(get('x-ratelimit-scope')).toBe(scope)
}

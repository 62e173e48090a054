import { type ClientRequest, type IncomingHttpHeaders, request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { expectErrorBody, listen } from './api/api-helpers.ts'
import { ESCPOS_RECEIPT, startTestCloud, type TestAccount, type TestCloud } from './test-cloud.ts'

// Real TCP on 127.0.0.1: bodies are sent in parts, so that one is still arriving while the next request
// comes. The server's own count (app.bodyBytesInFlight) is the sign that a body was admitted.

const KiB = 1024

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

interface Upload {
  req: ClientRequest
  body: Buffer
  answer: Promise<Answer>
}

let cloud: TestCloud | undefined
afterEach(async () => {
  await cloud?.close()
  cloud = undefined
})

async function start(limitBytes: number): Promise<{ cloud: TestCloud; account: TestAccount; base: string }> {
  cloud = await startTestCloud({ env: { MAX_BODY_BYTES_IN_FLIGHT: String(limitBytes) } })
  const account = await cloud.createAccount()
  return { cloud, account, base: await listen(cloud.app) }
}

/** A from-base64 body of about `size` bytes: an ESC/POS receipt padded with lines of text. */
function receiptBody(account: TestAccount, size: number): Buffer {
  const line = 'Item 0001 ...................... 12.50\n'
  const text = line.repeat(Math.max(1, Math.floor(((size - 200) * 3) / 4 / line.length)))
  const document = Buffer.concat([ESCPOS_RECEIPT, Buffer.from(text, 'ascii')])
  return Buffer.from(
    JSON.stringify({
      document_base64: document.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
      printer_id: account.receiptPrinterId,
    }),
  )
}

/** Starts a POST of `body` to from-base64: headers now (with Content-Length unless chunked), body later. */
async function startUpload(
  base: string,
  account: TestAccount,
  body: Buffer,
  chunked = false,
): Promise<Upload> {
  const req = request(`${base}/api/v1/print-jobs/from-base64`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${await account.token()}`,
      'content-type': 'application/json',
      ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }),
    },
  })
  const answer = new Promise<Answer>((resolve, reject) => {
    req.once('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
    })
    req.once('error', reject)
  })
  req.flushHeaders()
  return { req, body, answer }
}

function expectBusy(answer: Answer): void {
  expect(answer.status).toBe(503)
  expect(answer.headers['retry-after']).toBe('2')
  expect(answer.headers.connection).toBe('close')
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
  expectErrorBody(JSON.parse(answer.body), 'request_bodies_busy')
}

describe('request bodies in flight are capped globally (MAX_BODY_BYTES_IN_FLIGHT)', () => {
  it('answers a large body that would pass the cap 503 with Retry-After before reading it, then takes it once the first is done', async () => {
    const { cloud, account, base } = await start(256 * KiB)
    const first = await startUpload(base, account, receiptBody(account, 200 * KiB))
    first.req.write(first.body.subarray(0, 100 * KiB))
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(first.body.length)

    // Headers only: the answer comes without a byte of the body.
    const second = await startUpload(base, account, receiptBody(account, 100 * KiB))
    second.req.on('error', () => {}) // the server closes the connection after answering
    expectBusy(await second.answer)
    expect(cloud.app.bodyBytesInFlight()).toBe(first.body.length)

    first.req.end(first.body.subarray(100 * KiB))
    expect((await first.answer).status).toBe(201)
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(0)

    const third = await startUpload(base, account, receiptBody(account, 100 * KiB))
    third.req.end(third.body)
    expect((await third.answer).status).toBe(201)
  })

  it('takes a small body while large ones fill the budget', async () => {
    const { cloud, account, base } = await start(256 * KiB)
    const large = await startUpload(base, account, receiptBody(account, 250 * KiB))
    large.req.write(large.body.subarray(0, 10 * KiB))
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(large.body.length)

    const small = await startUpload(base, account, receiptBody(account, 4 * KiB))
    small.req.end(small.body)
    expect((await small.answer).status).toBe(201)

    large.req.end(large.body.subarray(10 * KiB))
    expect((await large.answer).status).toBe(201)
  })

  it('takes a lone body larger than the cap (up to its route limit)', async () => {
    const { account, base } = await start(64 * KiB)
    const lone = await startUpload(base, account, receiptBody(account, 200 * KiB))
    lone.req.end(lone.body)
    expect((await lone.answer).status).toBe(201)
  })

  it('counts a chunked body as it arrives and answers 503 once it passes the cap', async () => {
    const { cloud, account, base } = await start(256 * KiB)
    const first = await startUpload(base, account, receiptBody(account, 200 * KiB))
    first.req.write(first.body.subarray(0, 1 * KiB))
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(first.body.length)

    const chunked = await startUpload(base, account, receiptBody(account, 120 * KiB), true)
    chunked.req.on('error', () => {})
    chunked.req.write(chunked.body.subarray(0, 40 * KiB))
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(first.body.length + 40 * KiB)
    chunked.req.write(chunked.body.subarray(40 * KiB, 80 * KiB))
    expectBusy(await chunked.answer)
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(first.body.length)

    first.req.end(first.body.subarray(1 * KiB))
    expect((await first.answer).status).toBe(201)
    await expect.poll(() => cloud.app.bodyBytesInFlight()).toBe(0)
  })
})

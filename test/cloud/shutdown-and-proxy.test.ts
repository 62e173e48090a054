import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../cloud/config.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { ESCPOS_RECEIPT, startTestCloud } from './test-cloud.ts'

describe('behind a reverse proxy', () => {
  it('counts per-address quotas by the client address the proxy forwards when TRUST_PROXY is set', async () => {
    const cloud = await startTestCloud({ env: { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_IP: '2' } })
    const from = (address: string) =>
      cloud.app.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-forwarded-for': address } })
    expect((await from('198.51.100.7')).statusCode).toBe(200)
    expect((await from('198.51.100.7')).statusCode).toBe(200)
    const third = await from('198.51.100.7')
    expect(third.statusCode).toBe(429)
    expect(third.headers['x-ratelimit-scope']).toBe('ip')
    expect((await from('203.0.113.9')).statusCode).toBe(200)
    await cloud.close()
  })

  it.each([
    ['', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.1, 10.0.0.2', '10.0.0.1, 10.0.0.2'],
  ])('reads TRUST_PROXY=%j', (raw, expected) => {
    // loadConfig makes DATA_DIR.
    const dir = tempDir('trust-proxy-')
    try {
      expect(loadConfig({ DATA_DIR: dir.path, TRUST_PROXY: raw }).trustProxy).toEqual(expected)
    } finally {
      dir.remove()
    }
  })
})

describe('while the cloud shuts down', () => {
  it('finishes the request in flight and answers the next one on that connection with the error body', async () => {
    const cloud = await startTestCloud()
    const account = await cloud.createAccount()
    const base = new URL(await cloud.app.listen({ host: '127.0.0.1', port: 0 }))
    const body = JSON.stringify({
      document_base64: ESCPOS_RECEIPT.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
      printer_id: account.receiptPrinterId,
    })
    const token = await account.token()
    const head = (path: string, length: number, method = 'POST') =>
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
    const socket = connect(Number(base.port), '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString()
    })
    await new Promise((resolve) => socket.once('connect', resolve))
    const socketClosed = new Promise((resolve) => socket.once('close', resolve))
    // The first request is still arriving when the cloud is told to close.
    socket.write(head('/api/v1/print-jobs/from-base64', body.length) + body.slice(0, 10))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const closed = cloud.close()
    await new Promise((resolve) => setTimeout(resolve, 100))
    socket.write(body.slice(10) + head('/api/v1/printers', 0, 'GET'))
    // The cloud answers both, closes the connection (Connection: close), then finishes closing.
    await socketClosed
    await closed
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/)
    expect(first).toMatch(/^HTTP\/1\.1 201 /)
    expect(second).toMatch(/^HTTP\/1\.1 503 /)
    expect(second).toMatch(/\r\nretry-after: 1\r\n/i)
    expect(JSON.parse(second!.slice(second!.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'service_unavailable',
      error_code: 'shutting_down',
      message: 'The service is restarting; retry shortly.',
    })
  })

  it('ends a kept-alive connection once the answer in flight is sent, so closing never waits on an idle client', async () => {
    const cloud = await startTestCloud()
    const account = await cloud.createAccount()
    const base = new URL(await cloud.app.listen({ host: '127.0.0.1', port: 0 }))
    const body = JSON.stringify({
      document_base64: ESCPOS_RECEIPT.toString('base64'),
      document_format: 'raw',
      document_raw_language: 'escpos',
      printer_id: account.receiptPrinterId,
    })
    const socket = connect(Number(base.port), '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString()
    })
    await new Promise((resolve) => socket.once('connect', resolve))
    const socketClosed = new Promise((resolve) => socket.once('close', resolve))
    socket.write(
      `POST /api/v1/print-jobs/from-base64 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n` +
        `Authorization: Bearer ${await account.token()}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    const closed = cloud.close()
    await new Promise((resolve) => setTimeout(resolve, 100))
    // The client finishes its request and then just keeps the connection, sending nothing more: the cloud
    // must hang up by itself (a keep-alive client would otherwise hold the shutdown for its whole timeout).
    socket.write(body.slice(10))
    await socketClosed
    await closed
    expect(received).toMatch(/^HTTP\/1\.1 201 /)
  })
})

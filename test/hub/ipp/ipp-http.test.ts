import { writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import ipp from 'ipp'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { decodeIppResponse, encodeIppRequest } from '../../../hub/ipp/ipp-codec.ts'
import { IppError } from '../../../hub/ipp/ipp-error.ts'
import { postIpp } from '../../../hub/ipp/ipp-http.ts'
import { parseIppUri } from '../../../hub/ipp/ipp-uri.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// postIpp against loopback servers that misbehave: every exchange must end within its timeout, whatever the
// printer does, and let go of the connection.

const files = tempDir('print-hub-ipp-http-test-')
/** Far more than the socket buffers on both sides hold, so that a printer that stops reading stalls it. */
const bigDocument = path.join(files.path, 'big.pdf')
writeFileSync(bigDocument, Buffer.alloc(32 * 1024 * 1024, 0x25))
afterAll(() => files.remove())

const TIMEOUT_MS = 400
/** How long past its timeout an exchange may take to end: event loop and 2 busy cores, not a hang. */
const SLACK_MS = 2_500

const getPrinterAttributes = encodeIppRequest('Get-Printer-Attributes', 1, {
  'printer-uri': 'ipp://127.0.0.1/ipp/print',
})
const printJobRequest = encodeIppRequest('Print-Job', 2, {
  'printer-uri': 'ipp://127.0.0.1/ipp/print',
  'job-name': 'big',
  'document-format': 'application/pdf',
})

function ippAnswer(statusCode: string, jobAttributes: Record<string, unknown> = {}): Buffer {
  return ipp.serialize({
    version: '1.1',
    statusCode,
    id: 2,
    'operation-attributes-tag': { 'attributes-charset': 'utf-8', 'attributes-natural-language': 'en' },
    ...(Object.keys(jobAttributes).length > 0 ? { 'job-attributes-tag': jobAttributes } : {}),
  })
}

function httpAnswer(body: Buffer): Buffer {
  const head = `HTTP/1.1 200 OK\r\nContent-Type: application/ipp\r\nContent-Length: ${body.length}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), body])
}

interface Peer {
  uri: (scheme?: 'ipp' | 'ipps') => string
  /** Expects every connection the client opened to be closed (by the client: the peer never closes one). */
  expectAllClosed(): Promise<void>
}

const servers: Server[] = []
const sockets = new Set<Socket>()
afterEach(async () => {
  for (const socket of sockets) socket.destroy()
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/** A loopback TCP server that hands each connection it accepts to `onConnection`. */
async function peer(onConnection: (socket: Socket) => void): Promise<Peer> {
  const open = new Set<Socket>()
  const server = createServer((socket) => {
    open.add(socket)
    sockets.add(socket)
    socket.on('close', () => {
      open.delete(socket)
      sockets.delete(socket)
    })
    socket.on('error', () => {})
    onConnection(socket)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    uri: (scheme = 'ipp') => `${scheme}://127.0.0.1:${port}/ipp/print`,
    expectAllClosed: async () => {
      // A paused socket does not see its end: read on, to find out whether the client has gone.
      for (const socket of open) socket.resume()
      await expect.poll(() => open.size, { timeout: SLACK_MS, interval: 10 }).toBe(0)
    },
  }
}

/** Calls `then` once the HTTP request head has come in (the body may follow). */
function afterHead(socket: Socket, then: () => void): void {
  let head = Buffer.alloc(0)
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk])
    if (!head.includes('\r\n\r\n')) return
    socket.off('data', onData)
    then()
  }
  socket.on('data', onData)
}

type Settled = { value: Buffer } | { error: unknown } | 'still pending'

/** How `promise` ended, or 'still pending' after `ms`: a hang shows as such rather than as a test timeout. */
async function settledWithin(promise: Promise<Buffer>, ms: number): Promise<Settled> {
  return Promise.race([
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    sleep(ms).then(() => 'still pending' as const),
  ])
}

async function expectIppError(promise: Promise<Buffer>, kind: IppError['kind']): Promise<number> {
  const started = Date.now()
  const settled = await settledWithin(promise, TIMEOUT_MS + SLACK_MS)
  const elapsed = Date.now() - started
  expect(settled).toMatchObject({ error: expect.any(IppError) })
  expect((settled as { error: IppError }).error.kind).toBe(kind)
  return elapsed
}

describe('postIpp ends every exchange within its timeout', () => {
  it('when the printer takes the connection and never answers', async () => {
    const printer = await peer((socket) => socket.resume())
    const request = postIpp(parseIppUri(printer.uri()), getPrinterAttributes, { timeoutMs: TIMEOUT_MS })
    expect(await expectIppError(request, 'timeout')).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
    await printer.expectAllClosed()
  })

  it('when an ipps:// printer never starts the TLS handshake', async () => {
    const printer = await peer((socket) => socket.resume())
    const request = postIpp(parseIppUri(printer.uri('ipps')), getPrinterAttributes, {
      timeoutMs: TIMEOUT_MS,
    })
    await expectIppError(request, 'timeout')
    await printer.expectAllClosed()
  })

  it('when the printer sends part of its answer and then nothing', async () => {
    const printer = await peer((socket) =>
      afterHead(socket, () => {
        const whole = httpAnswer(ippAnswer('successful-ok'))
        socket.write(whole.subarray(0, whole.length - 5))
      }),
    )
    const request = postIpp(parseIppUri(printer.uri()), getPrinterAttributes, { timeoutMs: TIMEOUT_MS })
    await expectIppError(request, 'timeout')
    await printer.expectAllClosed()
  })

  it('when the printer stops reading in the middle of the document', async () => {
    const printer = await peer((socket) => afterHead(socket, () => socket.pause()))
    const request = postIpp(parseIppUri(printer.uri()), printJobRequest, {
      timeoutMs: TIMEOUT_MS,
      documentPath: bigDocument,
    })
    await expectIppError(request, 'timeout')
    await printer.expectAllClosed()
  })

  it("when the caller's signal fires in the middle of the document", async () => {
    const printer = await peer((socket) => afterHead(socket, () => socket.pause()))
    const abort = new AbortController()
    const request = postIpp(parseIppUri(printer.uri()), printJobRequest, {
      timeoutMs: 60_000,
      signal: abort.signal,
      documentPath: bigDocument,
    })
    await sleep(100)
    abort.abort()
    await expectIppError(request, 'aborted')
    await printer.expectAllClosed()
  })
})

describe("postIpp when the caller's signal fires after all of the document has gone", () => {
  const small = path.join(files.path, 'small.pdf')
  writeFileSync(small, Buffer.alloc(4096, 0x25))
  const contentLength = printJobRequest.length + 4096

  /** A printer that reads the whole request, tells `hasAll`, and then does `then` with the socket. */
  function readsAll(hasAll: () => void, then: (socket: Socket) => void) {
    return (socket: Socket) => {
      let received = Buffer.alloc(0)
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk])
        const headEnd = received.indexOf('\r\n\r\n')
        if (headEnd < 0 || received.length - headEnd - 4 < contentLength) return
        socket.removeAllListeners('data')
        hasAll()
        then(socket)
      })
    }
  }

  it('waits for the answer: the printer has the job, and the caller needs its job-id', async () => {
    const abort = new AbortController()
    const printer = await peer(
      readsAll(
        () => abort.abort(),
        (socket) => {
          setTimeout(() => socket.end(httpAnswer(ippAnswer('successful-ok', { 'job-id': 42 }))), 200)
        },
      ),
    )
    const settled = await settledWithin(
      postIpp(parseIppUri(printer.uri()), printJobRequest, {
        timeoutMs: 10_000,
        signal: abort.signal,
        documentPath: small,
      }),
      SLACK_MS,
    )
    expect(abort.signal.aborted).toBe(true)
    expect(settled).toMatchObject({ value: expect.any(Buffer) })
    expect(decodeIppResponse((settled as { value: Buffer }).value).jobAttributes['job-id']).toBe(42)
    await printer.expectAllClosed()
  })

  it('but no longer than its timeout', async () => {
    const abort = new AbortController()
    const printer = await peer(
      readsAll(
        () => abort.abort(),
        () => {},
      ),
    )
    const request = postIpp(parseIppUri(printer.uri()), printJobRequest, {
      timeoutMs: TIMEOUT_MS,
      signal: abort.signal,
      documentPath: small,
    })
    await expectIppError(request, 'aborted')
    expect(abort.signal.aborted).toBe(true)
    await printer.expectAllClosed()
  })
})

describe('postIpp with a printer that answers before it has all of the document', () => {
  const accepted = httpAnswer(ippAnswer('successful-ok', { 'job-id': 41, 'job-state': 'pending' }))

  it('takes an answer that accepts the job, when the printer then closes the connection', async () => {
    const printer = await peer((socket) => afterHead(socket, () => socket.end(accepted)))
    const settled = await settledWithin(
      postIpp(parseIppUri(printer.uri()), printJobRequest, {
        timeoutMs: TIMEOUT_MS,
        documentPath: bigDocument,
      }),
      TIMEOUT_MS + SLACK_MS,
    )
    expect(settled).toMatchObject({ value: expect.any(Buffer) })
    expect(decodeIppResponse((settled as { value: Buffer }).value).jobAttributes['job-id']).toBe(41)
    await printer.expectAllClosed()
  })

  it('takes an answer that accepts the job, when the printer keeps the connection and stops reading', async () => {
    const printer = await peer((socket) =>
      afterHead(socket, () => {
        socket.pause()
        socket.write(accepted)
      }),
    )
    const settled = await settledWithin(
      postIpp(parseIppUri(printer.uri()), printJobRequest, {
        timeoutMs: TIMEOUT_MS,
        documentPath: bigDocument,
      }),
      TIMEOUT_MS + SLACK_MS,
    )
    expect(settled).toMatchObject({ value: expect.any(Buffer) })
    expect(decodeIppResponse((settled as { value: Buffer }).value).jobAttributes['job-id']).toBe(41)
    await printer.expectAllClosed()
  })

  it('takes an answer that refuses the job, and stops sending it', async () => {
    const printer = await peer((socket) =>
      afterHead(socket, () => {
        socket.pause()
        socket.write(httpAnswer(ippAnswer('server-error-busy')))
      }),
    )
    const settled = await settledWithin(
      postIpp(parseIppUri(printer.uri()), printJobRequest, {
        timeoutMs: TIMEOUT_MS,
        documentPath: bigDocument,
      }),
      TIMEOUT_MS + SLACK_MS,
    )
    expect(settled).toMatchObject({ value: expect.any(Buffer) })
    expect(decodeIppResponse((settled as { value: Buffer }).value).status).toBe('server-error-busy')
    await printer.expectAllClosed()
  })
})

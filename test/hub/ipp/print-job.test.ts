import { writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import path from 'node:path'
import ipp from 'ipp'
import { afterAll, describe, expect, it } from 'vitest'
import { printIppJob } from '../../../hub/ipp/print-job.ts'
import { PRINT_OPTION_DEFAULTS } from '../../../protocol/print-job.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { describedPrinter, OFFICE_PRINTER } from './printer-attributes.ts'

const files = tempDir('print-hub-print-job-test-')
const pdf = path.join(files.path, 'page.pdf')
writeFileSync(pdf, Buffer.alloc(4096, 0x25))
let server: Server | undefined
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  files.remove()
})

function answer(res: ServerResponse, statusCode: string, jobAttributes: Record<string, unknown> = {}) {
  res.setHeader('Content-Type', 'application/ipp')
  res.end(
    ipp.serialize({
      version: '1.1',
      statusCode,
      id: 1,
      'operation-attributes-tag': { 'attributes-charset': 'utf-8', 'attributes-natural-language': 'en' },
      ...(Object.keys(jobAttributes).length > 0 ? { 'job-attributes-tag': jobAttributes } : {}),
    }),
  )
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

describe('printIppJob and its AbortSignal', () => {
  it('cancels a job the printer took while Print-Job was still waiting for its answer', async () => {
    const abort = new AbortController()
    const operations: string[] = []
    let state: 'processing' | 'canceled' = 'processing'
    server = createServer((req, res) => {
      void body(req).then((bytes) => {
        const operation = (ipp.parse(bytes) as unknown as { operation: string }).operation
        operations.push(operation)
        if (operation === 'Print-Job') {
          // The printer has the whole job: the caller aborts before its answer comes.
          abort.abort()
          setTimeout(() => answer(res, 'successful-ok', { 'job-id': 7, 'job-state': 'pending' }), 100)
        } else if (operation === 'Cancel-Job') {
          state = 'canceled'
          answer(res, 'successful-ok')
        } else answer(res, 'successful-ok', { 'job-id': 7, 'job-state': state })
      })
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }

    const outcome = await printIppJob(`ipp://127.0.0.1:${port}/ipp/print`, {
      file: pdf,
      format: 'application/pdf',
      jobName: 'abort-late',
      options: PRINT_OPTION_DEFAULTS,
      printer: describedPrinter(OFFICE_PRINTER),
      pollMs: 20,
      timeoutMs: 10_000,
      signal: abort.signal,
    })
    expect(outcome).toMatchObject({ state: 'canceled', jobId: 7 })
    expect(operations).toEqual(['Print-Job', 'Cancel-Job', 'Get-Job-Attributes'])
  })
})

import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ConnectTarget,
  fetchPublicDocument,
  type SafeFetchOptions,
} from '../../../cloud/fetch/safe-fetch.ts'
import { ApiError } from '../../../print-api/api-error.ts'
import { expectInjectedError } from '../api/api-helpers.ts'
import { startTestCloud } from '../test-cloud.ts'
import { startDnsServer, type TestDnsServer } from './dns-server.ts'

// Host names are resolved by c-ares against a DNS server on 127.0.0.1 (node:dgram). No socket is opened
// to a resolved address: the connector records the target and refuses.

const PUBLIC_V4 = '93.184.215.14'
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c'

const servers: TestDnsServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

async function dnsServer(records: Record<string, string[]> | null): Promise<TestDnsServer> {
  const server = await startDnsServer(records)
  servers.push(server)
  return server
}

function refusingConnector(targets: ConnectTarget[]): SafeFetchOptions['connect'] {
  return (target) => {
    targets.push(target)
    throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
  }
}

function options(server: TestDnsServer, overrides: Partial<SafeFetchOptions> = {}): SafeFetchOptions {
  return {
    maxBytes: 1024 * 1024,
    connectTimeoutMs: 20_000,
    totalTimeoutMs: 30_000,
    maxRedirects: 0,
    dnsTimeoutMs: 200,
    dnsTries: 1,
    dnsServers: [server.address],
    connect: refusingConnector([]),
    ...overrides,
  }
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    return error as ApiError
  }
  throw new Error('expected the fetch to fail')
}

describe('host-name resolution for URL documents', () => {
  it('resolves A and AAAA records with the configured DNS server and connects only to checked addresses', async () => {
    const server = await dnsServer({ 'docs.example.com': [PUBLIC_V4, PUBLIC_V6] })
    const targets: ConnectTarget[] = []
    const error = await failure(
      fetchPublicDocument(
        'https://docs.example.com/receipt.pdf',
        options(server, { connect: refusingConnector(targets) }),
      ),
    )
    expect(server.questions.sort()).toEqual(['docs.example.com A', 'docs.example.com AAAA'])
    expect(targets).toEqual([
      { address: PUBLIC_V4, port: 443, servername: 'docs.example.com' },
      { address: PUBLIC_V6, port: 443, servername: 'docs.example.com' },
    ])
    expect([error.status, error.code, error.details]).toEqual([
      422,
      'document_fetch_failed',
      { reason: 'connection_failed', cause: 'ECONNREFUSED' },
    ])
  })

  it('still refuses a name when any resolved address is not public (SSRF), without connecting', async () => {
    const server = await dnsServer({
      'mixed.example.com': [PUBLIC_V4, '10.0.0.1'],
      'v6.example.com': ['::1'],
    })
    const targets: ConnectTarget[] = []
    for (const name of ['mixed.example.com', 'v6.example.com']) {
      const error = await failure(
        fetchPublicDocument(
          `https://${name}/x.pdf`,
          options(server, { connect: refusingConnector(targets) }),
        ),
      )
      expect([error.status, error.code]).toEqual([400, 'url_not_allowed'])
    }
    expect(targets).toEqual([])
  })

  it.each([
    ['unknown.example.com', 'ENOTFOUND'],
    ['nodata.example.com', 'ENODATA'],
  ])('answers 422 dns_lookup_failed for %s (%s)', async (name, cause) => {
    const server = await dnsServer({ 'nodata.example.com': [] })
    const error = await failure(fetchPublicDocument(`https://${name}/x.pdf`, options(server)))
    expect([error.status, error.code, error.details]).toEqual([
      422,
      'document_fetch_failed',
      { reason: 'dns_lookup_failed', cause },
    ])
  })

  it('gives up on a DNS server that never answers after its own timeout, while file operations go on', async () => {
    const server = await dnsServer(null)
    const events: string[] = []
    // More lookups than libuv has threads (4): getaddrinfo would hold every thread until they time out.
    const fetches = Array.from({ length: 8 }, (_, i) =>
      failure(fetchPublicDocument(`https://silent-${i}.example.com/x.pdf`, options(server))).then((error) => {
        events.push('fetch failed')
        return error
      }),
    )
    await expect.poll(() => server.questions.length).toBeGreaterThanOrEqual(8)
    const files = Array.from({ length: 4 }, () =>
      readFile(new URL(import.meta.url)).then(() => {
        events.push('file read')
      }),
    )
    await Promise.all(files)
    for (const error of await Promise.all(fetches)) {
      expect([error.status, error.code, error.details]).toEqual([
        422,
        'document_fetch_failed',
        { reason: 'dns_lookup_failed', cause: 'ETIMEOUT' },
      ])
    }
    expect(events).toEqual([...Array(4).fill('file read'), ...Array(8).fill('fetch failed')])
  })

  it('from-url answers 422 dns_lookup_failed through the API, with DNS_TIMEOUT_MS and DNS_TRIES applied', async () => {
    const server = await dnsServer(null)
    const cloud = await startTestCloud({
      env: { DNS_TIMEOUT_MS: '100', DNS_TRIES: '2' },
      fetchSeams: { dnsServers: [server.address], connect: refusingConnector([]) },
    })
    try {
      const account = await cloud.createAccount()
      const res = await cloud.app.inject({
        method: 'POST',
        url: '/api/v1/print-jobs/from-url',
        headers: { authorization: `Bearer ${await account.token()}` },
        payload: { document_url: 'https://silent.example.com/label.pdf', printer_id: account.labelPrinterId },
      })
      expectInjectedError(res, 'document_fetch_failed', { reason: 'dns_lookup_failed', cause: 'ETIMEOUT' })
      // Two tries each for A and AAAA.
      expect(server.questions.sort()).toEqual([
        'silent.example.com A',
        'silent.example.com A',
        'silent.example.com AAAA',
        'silent.example.com AAAA',
      ])
    } finally {
      await cloud.close()
    }
  })
})

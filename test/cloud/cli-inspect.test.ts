import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../cloud/storage/storage.ts'
import { resolveOptions } from '../../print-api/route-check.ts'
import { cloudCli } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { insertWithinCapacity } from './storage/stored-jobs.ts'
import { RECEIPT_PRINTER } from './test-cloud.ts'

describe('cloud CLI: listing, showing and removing', () => {
  const dir = tempDir('cloud-cli-inspect-')
  const DATA_DIR = dir.path
  const cli = (args: string[]) => cloudCli(args, { DATA_DIR })
  const json = async (args: string[]) => {
    const result = await cli(args)
    expect(result.stderr).toBe('')
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    return JSON.parse(result.stdout)
  }
  let accountId: string
  let clientId: string
  let secret: string
  const ids = { hub: 'hub-1', gone: '', live: '', busy: '' }

  beforeAll(async () => {
    accountId = (await json(['account', 'create', '--name', 'Corner Bakery'])).account_id
    const client = await json(['client', 'create', '--account', accountId, '--scopes', 'print_jobs:read'])
    clientId = client.client_id
    secret = client.client_secret
    // A hub with printers as its state reports leave them: one it reports (online), others it does not.
    const storage = await openStorage({ dataDir: DATA_DIR })
    try {
      await storage.agents.insert({
        account_id: accountId,
        name: 'Front desk',
        agent_id: ids.hub,
        online: true,
      })
      const printer = async (name: string, online: boolean) =>
        (
          await storage.printers.insert({
            account_id: accountId,
            agent_id: ids.hub,
            name,
            capabilities: RECEIPT_PRINTER,
            reported: online,
          })
        ).printer_id
      ids.gone = await printer('Old till', false)
      ids.live = await printer('Till', true)
      ids.busy = await printer('Kitchen', false)
    } finally {
      await storage.close()
    }
  })
  afterAll(async () => dir.remove())

  it('account list and account show', async () => {
    expect(await json(['account', 'list'])).toEqual({
      accounts: [{ account_id: accountId, name: 'Corner Bakery', created_at: expect.any(String) }],
    })
    expect(await json(['account', 'show', '--id', accountId])).toEqual({
      account_id: accountId,
      name: 'Corner Bakery',
      created_at: expect.any(String),
      api_clients: 1,
      hubs: 1,
      printers: 3,
    })
    expect(await cli(['account', 'show', '--id', 'nope'])).toEqual({
      status: 1,
      stdout: '',
      stderr: 'cloud: no account nope\n',
    })
  })

  it('client list never shows the secret', async () => {
    const result = await cli(['client', 'list', '--account', accountId])
    expect(JSON.parse(result.stdout)).toEqual({
      clients: [
        {
          client_id: clientId,
          account_id: accountId,
          name: null,
          scopes: ['print_jobs:read'],
          created_at: expect.any(String),
          revoked_at: null,
        },
      ],
    })
    expect(result.stdout).not.toContain(secret)
    expect(result.stdout).not.toContain('secret')
  })

  it('hub list, printer list and job list', async () => {
    expect((await json(['hub', 'list', '--account', accountId])).hubs).toMatchObject([
      { agent_id: ids.hub, name: 'Front desk', online: true },
    ])
    expect(
      (await json(['printer', 'list', '--account', accountId])).printers.map((p: { name: string }) => p.name),
    ).toEqual(['Kitchen', 'Till', 'Old till'])
    expect(await json(['job', 'list', '--account', accountId, '--limit', '5'])).toEqual({ jobs: [] })
    expect((await cli(['job', 'list', '--account', accountId, '--limit', '500'])).stderr.split('\n')[0]).toBe(
      'cloud: --limit must be a whole number from 1 to 100 (got "500")',
    )
    expect(await cli(['hub', 'list', '--account', 'nope'])).toMatchObject({
      status: 1,
      stderr: 'cloud: no account nope\n',
    })
  })

  it('hub show, printer show and job show (with what the hub was told)', async () => {
    expect(await json(['hub', 'show', '--id', ids.hub])).toMatchObject({
      agent_id: ids.hub,
      account_id: accountId,
      name: 'Front desk',
      online: true,
    })
    expect(await json(['printer', 'show', '--id', ids.live])).toMatchObject({
      printer_id: ids.live,
      account_id: accountId,
      agent_id: ids.hub,
      name: 'Till',
      online: true,
    })
    const storage = await openStorage({ dataDir: DATA_DIR })
    const jobId = randomUUID()
    try {
      const document = {
        document_id: randomUUID(),
        document_mime_type: 'application/vnd.escpos',
        document_format: 'raw' as const,
        document_raw_language: 'escpos' as const,
        size_bytes: 4,
        sha256: 'a'.repeat(64),
        filename: null,
        created_at: new Date().toISOString(),
      }
      await storage.documents.insertWithinQuota(accountId, document, 1e9)
      await insertWithinCapacity(
        storage,
        accountId,
        {
          ...resolveOptions({}),
          print_job_id: jobId,
          document_id: document.document_id,
          document_mime_type: document.document_mime_type,
          document_format: 'raw',
          document_raw_language: 'escpos',
          printer_id: ids.live,
          status: 'pending',
          created_at: new Date().toISOString(),
          reserved_at: null,
          started_at: null,
          completed_at: null,
          failure_reason: null,
          failure_detail: null,
          waiting_reason: null,
          origin: 'cloud',
          duplicate_of: null,
        },
        1000,
      )
    } finally {
      await storage.close()
    }
    expect(await json(['job', 'show', '--id', jobId])).toMatchObject({
      print_job_id: jobId,
      account_id: accountId,
      agent_id: ids.hub,
      status: 'pending',
      offered_at: null,
      cancel_requested_at: null,
    })
    for (const what of ['hub', 'printer', 'job'])
      expect(await cli([what, 'show', '--id', 'nope'])).toMatchObject({
        status: 1,
        stderr: expect.stringMatching(/^cloud: no /),
      })
  })

  it('printer remove: refused while online, done when no hub reports it; then gone from the list', async () => {
    expect(await cli(['printer', 'remove', '--id', ids.live])).toEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: printer ${ids.live} is online: its hub still reports it; take it off the hub (its --printer) first\n`,
    })
    expect(await json(['printer', 'remove', '--id', ids.gone])).toEqual({
      printer_id: ids.gone,
      account_id: accountId,
      removed_at: expect.any(String),
    })
    expect(
      (await json(['printer', 'list', '--account', accountId])).printers.map((p: { name: string }) => p.name),
    ).toEqual(['Kitchen', 'Till'])
    expect(await cli(['printer', 'remove', '--id', ids.gone])).toMatchObject({
      status: 1,
      stderr: `cloud: no printer ${ids.gone}\n`,
    })
  })

  it('an unknown option names itself, with the usage of its command', async () => {
    expect(await cli(['account', 'create', '--nmae', 'x'])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'cloud: unknown option --nmae\nusage: cloud account create --name NAME\n',
    })
  })
})

import type { MqttClient } from 'mqtt'
import { afterEach, describe, expect, it } from 'vitest'
import { expectFetchedError } from '../cloud/api/api-helpers.ts'
import { connectHub, enroll, seedAccount, startFullCloud } from '../cloud/hub-link.ts'
import { ESCPOS_RECEIPT, RECEIPT_PRINTER } from '../cloud/test-cloud.ts'
import { cloudCommand, runCli } from '../helpers/cli.ts'

// `cloud client revoke` and `cloud hub revoke` run as their own processes with only the database, against a
// running cloud (API, broker and dispatcher in this process): what they revoke stops working at once. The
// client to revoke is made with the CLI's command in this process.

let full: Awaited<ReturnType<typeof startFullCloud>> | undefined
let hubClient: MqttClient | undefined
afterEach(async () => {
  hubClient?.end(true)
  hubClient = undefined
  await full?.close()
  full = undefined
})

function cli(args: string[]) {
  const result = runCli('cloud/cli.ts', args, { DATA_DIR: full!.dataDir, LOG_LEVEL: 'silent' })
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  expect(result.stdout.trim().split('\n')).toHaveLength(1)
  return JSON.parse(result.stdout) as Record<string, string>
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('revoking credentials through the CLI while the cloud runs', () => {
  it('client revoke: its access token answers 401 at once and its secret gets no more tokens', async () => {
    full = await startFullCloud()
    const { accountId } = await seedAccount(full.cloud)
    const created = await cloudCommand(
      ['client', 'create', '--account', accountId, '--scopes', 'printers:read'],
      {
        DATA_DIR: full.dataDir,
      },
    )
    const tokenRequest = () =>
      fetch(`${full!.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: created.client_id!,
          client_secret: created.client_secret!,
        }),
      })
    const issued = await tokenRequest()
    expect(issued.status).toBe(200)
    const { access_token } = (await issued.json()) as { access_token: string }
    const printers = () =>
      fetch(`${full!.url}/api/v1/printers`, { headers: { authorization: `Bearer ${access_token}` } })
    const before = await printers()
    expect(before.status).toBe(200)
    await before.body?.cancel()

    expect(cli(['client', 'revoke', '--id', created.client_id!])).toEqual({
      client_id: created.client_id,
      account_id: accountId,
      revoked_at: expect.stringMatching(ISO),
    })

    const after = await printers()
    expect(after.headers.get('www-authenticate')).toBe(
      'Bearer realm="print-hub", error="invalid_token", error_description="The access token is refused: unknown or expired."',
    )
    await expectFetchedError(after, 'invalid_token')
    const refused = await tokenRequest()
    expect(refused.headers.get('www-authenticate')).toBe('Basic realm="print-hub"')
    await expectFetchedError(refused, 'invalid_client')
  })

  it('hub revoke: its MQTT session is closed at once, its reconnect refused, its downloads answer 401', async () => {
    full = await startFullCloud()
    const seeded = await seedAccount(full.cloud)
    const hub = await enroll(full.url, seeded.enrollmentToken)
    const printer = await full.cloud.storage.printers.insert({
      account_id: seeded.accountId,
      agent_id: hub.agent_id,
      name: 'Receipts',
      capabilities: RECEIPT_PRINTER,
      reported: true,
    })
    const created = await fetch(`${full.url}/api/v1/print-jobs/from-base64`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        document_base64: ESCPOS_RECEIPT.toString('base64'),
        document_format: 'raw',
        document_raw_language: 'escpos',
        printer_id: printer.printer_id,
      }),
    })
    expect(created.status).toBe(201)
    const { document_id } = (await created.json()) as { document_id: string }
    const download = () =>
      fetch(`${full!.url}/agent-api/v1/documents/${document_id}`, {
        headers: { authorization: `Bearer ${hub.credential}` },
      })
    const before = await download()
    expect(before.status).toBe(200)
    expect(Buffer.from(await before.arrayBuffer())).toEqual(ESCPOS_RECEIPT)

    const asHub = { clientId: hub.agent_id, username: hub.agent_id, password: hub.credential }
    hubClient = await connectHub(full.mqttUrl, asHub)
    const closed = new Promise<void>((resolve) => hubClient!.once('close', () => resolve()))

    expect(cli(['hub', 'revoke', '--id', hub.agent_id])).toEqual({
      agent_id: hub.agent_id,
      revoked_at: expect.stringMatching(ISO),
    })

    // The CLI only wrote the database: the running cloud notices and closes the session.
    await closed
    expect(hubClient.connected).toBe(false)
    // MQTT 3.1.1 §3.2.2.3: CONNACK return code 4, bad user name or password.
    const reconnect = await connectHub(full.mqttUrl, asHub).then(
      (client) => {
        client.end(true)
        return null
      },
      (error: unknown) => error as { code?: number },
    )
    expect(reconnect?.code).toBe(4)
    const after = await download()
    await expectFetchedError(after, 'hub_credential_invalid')
  })
})

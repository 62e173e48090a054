import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { exportSPKI } from 'jose'
import type { ProvisionedManagedAccount } from '../../protocol/partner.ts'
import { rsaKeyPair, signAssertion } from '../cloud/developer/applications.ts'
import { exitOf, hasExited, spawnCli, waitForLogLine } from '../helpers/cli.ts'
import { type CloudProcess, FAST_HUB_ENV, newTempDir } from './harness.ts'

/** A partner registered with `cloud app create --partner` and calling the partner API over HTTP. */
export interface HttpPartner {
  appId: string
  /** POST or GET on the partner API with a fresh assertion. */
  request(method: 'GET' | 'POST', url: string, body?: unknown): Promise<Response>
  /** Provisions a managed account whose onboarding link returns to `returnUri` with `state`. */
  provision(returnUri: string, state: string): Promise<ProvisionedManagedAccount>
}

export async function registerHttpPartner(cloud: CloudProcess): Promise<HttpPartner> {
  const keys = await rsaKeyPair()
  const keyFile = path.join(await newTempDir('e2e-partner-'), 'public.pem')
  writeFileSync(keyFile, await exportSPKI(keys.publicKey))
  const { app_id, kid } = await cloud.admin([
    'app',
    'create',
    '--name',
    'POS vendor',
    '--public-key',
    keyFile,
    '--partner',
  ])
  const appId = String(app_id)
  const request: HttpPartner['request'] = async (method, url, body) =>
    fetch(`${cloud.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${await signAssertion(keys.privateKey, { kid }, { iss: appId, aud: cloud.url })}`,
        ...(body !== undefined && { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
  return {
    appId,
    request,
    async provision(returnUri, state) {
      const res = await request('POST', '/partner-api/v1/accounts', {
        external_customer_id: randomUUID(),
        name: 'Corner shop',
        permissions: ['printers:read', 'print_jobs:read'],
        agent_onboarding: { return_uri: returnUri, state },
      })
      if (res.status !== 201) throw new Error(`provisioning answered ${res.status}: ${await res.text()}`)
      return (await res.json()) as ProvisionedManagedAccount
    },
  }
}

/** A hub process started without --enroll and without an identity: it pairs. Stop it with `stop()`. */
export interface PairingHub {
  process: ChildProcess
  dataDir: string
  logs: string[]
  /** The `pairing code …` log line once it appears. */
  pairingLine: Promise<Record<string, unknown>>
  /** The `hub ready` log line once paired and running. */
  ready: Promise<Record<string, unknown>>
  stop(): Promise<void>
}

export async function startPairingHub(cloudUrl: string, printers: string[] = []): Promise<PairingHub> {
  const dataDir = await newTempDir('e2e-pairing-hub-')
  const args = ['run', '--cloud', cloudUrl, '--data', dataDir]
  for (const printer of printers) args.push('--printer', printer)
  const child = spawnCli('hub/cli.ts', args, FAST_HUB_ENV)
  const logs: string[] = []
  child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  const pairingLine = waitForLogLine(child, (line) => typeof line.pairing_code === 'string')
  const ready = waitForLogLine(child, (line) => line.msg === 'hub ready')
  // Observed by the caller; unobserved rejections (the process stopped first) are not failures here.
  pairingLine.catch(() => {})
  ready.catch(() => {})
  return {
    process: child,
    dataDir,
    logs,
    pairingLine,
    ready,
    async stop() {
      if (!hasExited(child)) child.kill('SIGTERM')
      await exitOf(child)
    },
  }
}

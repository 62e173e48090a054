import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.ts'
import {
  type CloudProcess,
  newTempDir,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from './harness.ts'

describe('hub enrollment through the CLIs', () => {
  let cloud: CloudProcess
  let account: Awaited<ReturnType<typeof setUpAccount>>

  beforeAll(async () => {
    cloud = await startCloudProcess()
    account = await setUpAccount(cloud)
  })
  afterAll(() => stopAll())

  const hubRun = (args: string[]) =>
    runCli('hub/cli.ts', ['run', '--cloud', cloud.url, ...args], { LOG_LEVEL: 'silent' })

  it('prints a single-use token that expires in 24 hours by default', async () => {
    const created = await cloud.admin([
      'enrollment',
      'create',
      '--account',
      account.accountId,
      '--name',
      'Back office',
    ])
    expect(created).toEqual({
      enrollment_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      token: expect.stringMatching(/^enr_[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
      state: 'pending',
    })
    const hours = (Date.parse(created.expires_at!) - Date.now()) / 3600_000
    expect(hours).toBeGreaterThan(23.9)
    expect(hours).toBeLessThanOrEqual(24)
  })

  it('claims the token once; later runs need no token and keep the same agent', async () => {
    const dataDir = await newTempDir('e2e-hub-')
    const first = await startHubProcess({
      cloudUrl: cloud.url,
      dataDir,
      enroll: account.enrollmentToken,
      printers: [],
    })
    expect(await first.stop()).toBe(0)
    const again = await startHubProcess({ cloudUrl: cloud.url, dataDir, printers: [] })
    expect(again.agentId).toBe(first.agentId)
    expect(await again.stop()).toBe(0)

    const reuse = hubRun(['--data', await newTempDir('e2e-hub-'), '--enroll', account.enrollmentToken])
    expect(reuse.status).toBe(1)
    expect(reuse.stderr).toBe(
      'hub: enrollment refused: This enrollment token was already used. (enrollment_claimed)\n',
    )
  })

  it('shows the hub offline within its keep-alive after kill -9, and online again when it is back', async () => {
    const shop = await setUpAccount(cloud, 'Presence shop')
    const hub = await startHubProcess({ cloudUrl: cloud.url, enroll: shop.enrollmentToken, printers: [] })
    const online = async () => {
      const res = await fetch(`${cloud.url}/api/v1/agents`, {
        headers: { authorization: `Bearer ${shop.accessToken}` },
      })
      const { data } = (await res.json()) as { data: { agent_id: string; online: boolean }[] }
      return data.find((agent) => agent.agent_id === hub.agentId)?.online
    }
    await expect.poll(online, { timeout: 10_000 }).toBe(true)
    await hub.kill()
    // HUB_KEEPALIVE_SECONDS is 2 in these tests: the broker notices within it and publishes the last will.
    await expect.poll(online, { timeout: 4_000, interval: 100 }).toBe(false)
    await startHubProcess({ cloudUrl: cloud.url, dataDir: hub.dataDir, printers: [] })
    await expect.poll(online, { timeout: 10_000 }).toBe(true)
  })

  it('refuses a revoked token and an unknown one with a clear message', async () => {
    const { enrollment_id, token } = await cloud.admin([
      'enrollment',
      'create',
      '--account',
      account.accountId,
      '--name',
      'Spare',
    ])
    expect(await cloud.admin(['enrollment', 'revoke', '--id', enrollment_id!])).toEqual({
      enrollment_id,
      state: 'revoked',
    })
    const dataDir = await newTempDir('e2e-hub-')
    const revoked = hubRun(['--data', dataDir, '--enroll', token!])
    expect(revoked.status).toBe(1)
    expect(revoked.stderr).toBe(
      'hub: enrollment refused: This enrollment was revoked; ask for a new one. (enrollment_revoked)\n',
    )
    expect(existsSync(path.join(dataDir, 'identity.json'))).toBe(false)
    const unknown = hubRun(['--data', dataDir, '--enroll', 'enr_not-a-real-token'])
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toBe(
      'hub: enrollment refused: No enrollment has this token. (enrollment_token_invalid)\n',
    )
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAccount } from '../test-cloud.ts'
import { type ConsoleClient, type ConsoleHarness, startConsoleHarness } from './console-harness.ts'
import { facts, partUnder, textOf } from './page-text.ts'

describe("console: a hub's LAN printing", () => {
  let h: ConsoleHarness

  beforeAll(async () => {
    h = await startConsoleHarness()
  })
  afterAll(async () => {
    await h?.close()
  })

  /** An account of its own (a hub with two printers) with an owner and a member signed in. */
  const freshAccount = async (): Promise<{
    account: TestAccount
    owner: ConsoleClient
    member: ConsoleClient
  }> => {
    const account = await h.cloud.createAccount('LAN shop')
    return {
      account,
      owner: await h.signIn('owner', account.accountId),
      member: await h.signIn('member', account.accountId),
    }
  }
  const lanPart = async (client: ConsoleClient, agentId: string) =>
    partUnder((await client.get(`/console/hubs/${agentId}`)).body, 'LAN printing')
  const enabled = async (agentId: string) => (await h.cloud.storage.agents.lanApiOf(agentId))?.enabled

  it('is off by default; an owner turns it on and off again', async () => {
    const { account, owner } = await freshAccount()
    const path = `/console/hubs/${account.agentId}`
    const off = await lanPart(owner, account.agentId)
    expect(textOf(off)).toBe(
      'LAN printing Off: the hub prints only what comes through this service. Turn LAN printing on',
    )
    expect(off).toContain(`action="${path}/lan/enable"`)

    const on = await owner.post(`${path}/lan/enable`)
    expect(on.statusCode).toBe(303)
    expect(on.headers.location).toBe(`${path}?done=lan-enabled`)
    expect(await enabled(account.agentId)).toBe(true)
    const page = await owner.get(`${path}?done=lan-enabled`)
    expect(page.body).toContain('<p class="notice ok" role="status">LAN printing is on:')
    expect(textOf(partUnder(page.body, 'LAN printing'))).toContain(
      'On: tills of this account can print through this hub on its local network while the internet is down.',
    )
    expect(partUnder(page.body, 'LAN printing')).toContain(`action="${path}/lan/disable"`)

    const offAgain = await owner.post(`${path}/lan/disable`)
    expect(offAgain.headers.location).toBe(`${path}?done=lan-disabled`)
    expect(await enabled(account.agentId)).toBe(false)
  })

  it('shows where the hub serves it, with the digests a till pins, while the hub reports it', async () => {
    const { account, owner, member } = await freshAccount()
    await owner.post(`/console/hubs/${account.agentId}/lan/enable`)
    const lan = {
      port: 8443,
      addresses: ['192.168.1.20', 'fe80::1'],
      cert_sha256: 'c'.repeat(64),
      spki_sha256: `${'K'.repeat(43)}=`,
    }
    await h.cloud.storage.agents.recordState(
      account.agentId,
      { version: '1.5.0', lan },
      new Date().toISOString(),
    )
    const part = await lanPart(member, account.agentId)
    expect(facts(part)).toStrictEqual({
      Addresses: 'https://192.168.1.20:8443/ https://[fe80::1]:8443/',
      'Certificate SHA-256': lan.cert_sha256,
      'Key SHA-256 (SPKI)': lan.spki_sha256,
    })
    expect(textOf(part)).toContain('Only an owner of this account can turn it on or off.')

    await h.cloud.storage.agents.recordState(
      account.agentId,
      { version: '1.5.0', lan: null },
      new Date().toISOString(),
    )
    expect(facts(await lanPart(member, account.agentId))).toStrictEqual({})
  })

  it("refuses a member (403), another account's owner (404) and a form without the CSRF token, changing nothing", async () => {
    const { account, member } = await freshAccount()
    const path = `/console/hubs/${account.agentId}/lan/enable`
    const refused = await member.post(path)
    expect(refused.statusCode).toBe(403)
    expect(refused.body).toContain('turn a hub’s LAN printing on or off')

    const stranger = await h.signIn('owner', h.otherAccount.accountId)
    expect((await stranger.post(path)).statusCode).toBe(404)

    const owner = await h.signIn('owner', account.accountId)
    expect((await owner.post(path, { _csrf: 'forged' })).statusCode).toBe(403)
    expect(await enabled(account.agentId)).toBe(false)
  })
})

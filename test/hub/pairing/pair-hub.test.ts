import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/storage/database.ts'
import { databaseLocation } from '../../../cloud/storage/storage.ts'
import { CloudClient } from '../../../hub/cloud/cloud-client.ts'
import { pairHub } from '../../../hub/pairing/pair-hub.ts'
import { Backoff } from '../../../hub/session/backoff.ts'
import { hashSecret } from '../../../print-api/secrets.ts'
import type { ProvisionedManagedAccount } from '../../../protocol/partner.ts'
import { listen } from '../../cloud/api/api-helpers.ts'
import { registerPartner } from '../../cloud/partner/partner-helpers.ts'
import { startTestCloud, type TestCloud } from '../../cloud/test-cloud.ts'

describe('pairHub against a real cloud', () => {
  let cloud: TestCloud
  let url: string

  beforeAll(async () => {
    cloud = await startTestCloud({
      env: { TOKEN_FAILURES_PER_CLIENT: '1000', TOKEN_FAILURES_PER_IP: '1000' },
    })
    url = await listen(cloud.app)
  })
  afterAll(() => cloud?.close())

  const linkHash = (shop: ProvisionedManagedAccount) =>
    hashSecret(new URL(shop.agent_enrollment.onboarding_url).pathname.split('/').pop() ?? '')
  const typeCode = async (shop: ProvisionedManagedAccount, code: string) => {
    const paired = await cloud.storage.pairings.pair(
      linkHash(shop),
      hashSecret(code.replace('-', '')),
      new Date(),
      10,
    )
    expect(paired.outcome).toBe('paired')
  }
  const options = (pause: (ms: number) => Promise<void>, announced: string[]) => {
    const logger = pino({ level: 'silent' })
    return {
      client: new CloudClient(url),
      hostname: 'pi-hub',
      agentVersion: '1.0.0',
      wait: { cloudUrl: url, logger, backoff: new Backoff(10, 20) },
      logger,
      announce: async (code: string) => {
        announced.push(code)
      },
      pause,
    }
  }

  it('waits the interval, adds 5 s after slow_down, and returns the credential once the code is typed', async () => {
    const shop = await (await registerPartner(cloud)).provision()
    const announced: string[] = []
    const pauses: number[] = []
    // The pause returns at once: the second poll comes too soon and is told to slow down.
    const identity = await pairHub(
      options(async (ms) => {
        pauses.push(ms)
        if (pauses.length === 3) await typeCode(shop, announced[0] ?? '')
      }, announced),
    )
    expect(pauses).toStrictEqual([5000, 5000, 10000])
    expect(announced).toHaveLength(1)
    expect(identity).toMatchObject({
      account_id: shop.account_id,
      credential: expect.stringMatching(/^hub_/),
    })
  })

  it('asks for a new code when its code expired, and pairs with the new one', async () => {
    const shop = await (await registerPartner(cloud)).provision()
    const announced: string[] = []
    const identity = await pairHub(
      options(async () => {
        if (announced.length === 1) {
          const database = await openDatabase(databaseLocation({ dataDir: cloud.dataDir }))
          await database.db
            .updateTable('pairings')
            .set({ expires_at: Date.now() - 1 })
            .execute()
          await database.db.destroy()
        } else await typeCode(shop, announced[1] ?? '')
      }, announced),
    )
    expect(announced).toHaveLength(2)
    expect(announced[1]).not.toBe(announced[0])
    expect(identity.account_id).toBe(shop.account_id)
  })
})

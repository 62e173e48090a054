import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.ts'
import { loadConfig } from '../../../cloud/config.ts'
import { createBlobStore } from '../../../cloud/storage/blob-store.ts'
import { openStorage, type Storage } from '../../../cloud/storage/storage.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { bearer } from '../api/api-helpers.ts'
import { assertionSync, registerApplication } from '../developer/applications.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { accountRequest } from './partner-helpers.ts'

/**
 * A node that dies after provisioning an account but before answering: the retry, sent to another node on
 * the same database, replays the account (and its secrets) instead of refusing the customer id as taken.
 */
describe('partner Idempotency-Key across a node that died mid-request', () => {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it('replays the account provisioned before the crash', async () => {
    const dir = tempDir('cloud-dying-')
    cleanups.push(() => dir.remove())
    const config = loadConfig({ DATA_DIR: dir.path, PUBLIC_URL: 'http://127.0.0.1:8080' })
    const storage = await openStorage({ dataDir: config.dataDir })
    cleanups.push(() => storage.close())
    // The answer never goes out: recording it as it is sent hangs, as if the process had died at that moment.
    const dying: Storage = {
      ...storage,
      idempotency: { ...storage.idempotency, complete: () => new Promise<void>(() => {}) },
    }
    const app = await buildApp({ config, storage: dying, blobs: createBlobStore(config.dataDir) })
    await app.ready()
    cleanups.push(() => app.close())
    const partner = await registerApplication(storage, config.publicUrl, { partner: true })
    const request = (authorization: string) => ({
      method: 'POST' as const,
      url: '/partner-api/v1/accounts',
      headers: { ...bearer(authorization), 'idempotency-key': 'provision-77' },
      payload: accountRequest('crash-tenant'),
    })
    const sent = request(assertionSync(partner, config.publicUrl))
    let answered = false
    void app.inject(sent).then(() => {
      answered = true
    })
    await expect
      .poll(async () => storage.managedAccounts.findByExternalId(partner.appId, 'crash-tenant'))
      .toBeDefined()

    const restarted: TestCloud = await startTestCloud({ dataDir: dir.path })
    cleanups.push(() => restarted.close())
    const retry = await restarted.app.inject({
      ...sent,
      headers: { ...sent.headers, ...bearer(assertionSync(partner, config.publicUrl)) },
    })
    expect(answered).toBe(false)
    expect(retry.statusCode, retry.body).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    const relationship = await storage.managedAccounts.findByExternalId(partner.appId, 'crash-tenant')
    expect(retry.json()).toMatchObject({
      relationship_id: relationship?.relationship_id,
      onboarding_url: expect.stringMatching(/\/onboarding\/onb_/),
      agent_enrollment: { enrollment_token: expect.stringMatching(/^enr_/) },
    })
    expect((await storage.managedAccounts.list(partner.appId, 10, undefined, undefined))?.data).toHaveLength(
      1,
    )
  })
})

import path from 'node:path'
import Database from 'better-sqlite3'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../cloud/config.ts'
import { startCloud } from '../../cloud/server.ts'
import { DATABASE_FILE, openStorage, type Storage } from '../../cloud/storage/storage.ts'
import { hashSecret } from '../../print-api/secrets.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { ALL_SCOPES } from './test-cloud.ts'

describe('the running cloud keeps house', () => {
  const dir = tempDir()
  afterEach(() => dir.remove())

  it('purges expired tokens at start and every HOUSEKEEPING_INTERVAL_SECONDS, and stops on close', async () => {
    const expire = async (storage: Storage, accountId: string, clientId: string, name: string) =>
      await storage.apiClients.storeToken(hashSecret(name), {
        account_id: accountId,
        client_id: clientId,
        scopes: ALL_SCOPES,
        expires_at: Date.now() - 1000,
      })
    const before = await openStorage({ dataDir: dir.path })
    const accountId = (await before.accounts.create('Shop')).account_id
    const clientId = (await before.apiClients.create(accountId, hashSecret('cs_x'), ALL_SCOPES)).client_id
    await expire(before, accountId, clientId, 'expired before start')
    await before.close()

    const logs: { name?: string; msg: string; access_tokens?: number }[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) })
    const config = loadConfig({
      DATA_DIR: dir.path,
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_PORT: '0',
      HOUSEKEEPING_INTERVAL_SECONDS: '1',
    })
    const cloud = await startCloud(config, logger)
    const sql = new Database(path.join(dir.path, DATABASE_FILE), { readonly: true })
    const tokens = () => sql.prepare('SELECT count(*) FROM access_tokens').pluck().get()
    try {
      await expect.poll(tokens, { timeout: 10_000 }).toBe(0)
      await expire(cloud.storage, accountId, clientId, 'expired while running')
      expect(tokens()).toBe(1)
      await expect.poll(tokens, { timeout: 10_000 }).toBe(0)
    } finally {
      sql.close()
      await cloud.close()
    }
    const purges = logs.filter((l) => l.msg === 'housekeeping purged')
    expect(purges.length).toBeGreaterThanOrEqual(2)
    expect(purges[0]).toMatchObject({ name: 'housekeeping', access_tokens: 1 })
    // Stopped before the database closed: no pass ran into a closed database.
    expect(logs.filter((l) => l.msg.startsWith('housekeeping step failed'))).toEqual([])
  })
})

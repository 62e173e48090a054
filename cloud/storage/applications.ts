import { randomUUID } from 'node:crypto'
import type { Scope } from '../../protocol/enums.ts'
import { affected, inTransaction, type Sql } from './engine.ts'

export interface Application {
  app_id: string
  name: string
  /** May provision and manage customer accounts (partner API). */
  partner: boolean
  created_at: string
}

export interface ApplicationKey {
  kid: string
  /** The RS256 public key as a JWK. */
  jwk: Record<string, unknown>
}

export interface Installation {
  installation_id: string
  app_id: string
  account_id: string
  permissions: Scope[]
  /** Whether it may receive tokens now: its own flag, and its account active. */
  active: boolean
  created_at: string
}

export interface IssuedInstallationToken {
  installation_id: string
  account_id: string
  scopes: Scope[]
  expires_at: number
}

export interface ApplicationRepository {
  create(name: string, partner: boolean): Promise<Application>
  findById(appId: string): Promise<Application | undefined>
  /** Adds a public key; false when the application already has a key with this kid. */
  addKey(appId: string, key: ApplicationKey): Promise<boolean>
  /** The application's keys, oldest first; only the one named `kid` when given. */
  keys(appId: string, kid?: string): Promise<ApplicationKey[]>
  /**
   * Records an assertion's `jti` as used until `expiresAt` (epoch ms); false when it was used already. One
   * INSERT against the primary key, so two nodes on one database cannot both accept it. Records past their
   * expiry are purged first.
   */
  useAssertion(appId: string, jti: string, expiresAt: number, now: number): Promise<boolean>
  install(appId: string, accountId: string, permissions: readonly Scope[]): Promise<Installation>
  findInstallation(installationId: string): Promise<Installation | undefined>
  installationOf(appId: string, accountId: string): Promise<Installation | undefined>
  /** Marks the installation inactive for good and deletes its tokens (the account was closed). */
  deactivateInstallation(installationId: string): Promise<void>
  storeToken(tokenHash: Buffer, token: IssuedInstallationToken): Promise<void>
  /** The unexpired token with this hash, while its installation is active and its account active. */
  findToken(tokenHash: Buffer, now: number): Promise<IssuedInstallationToken | undefined>
  deleteExpiredTokens(now: number): Promise<number>
}

const splitScopes = (scopes: string) => (scopes === '' ? [] : (scopes.split(' ') as Scope[]))

export function createApplicationRepository(sql: Sql): ApplicationRepository {
  const { db } = sql
  const installationQuery = (on = db) =>
    on
      .selectFrom('app_installations as i')
      .innerJoin('accounts as a', 'a.account_id', 'i.account_id')
      .select([
        'i.installation_id',
        'i.app_id',
        'i.account_id',
        'i.permissions',
        'i.active',
        'i.created_at',
        'a.state',
      ])
  const toInstallation = (row: {
    installation_id: string
    app_id: string
    account_id: string
    permissions: string
    active: number
    created_at: string
    state: string
  }): Installation => ({
    installation_id: row.installation_id,
    app_id: row.app_id,
    account_id: row.account_id,
    permissions: splitScopes(row.permissions),
    active: row.active === 1 && row.state === 'active',
    created_at: row.created_at,
  })
  return {
    async create(name, partner) {
      const app = { app_id: randomUUID(), name, partner, created_at: new Date().toISOString() }
      await db
        .insertInto('applications')
        .values({ ...app, partner: partner ? 1 : 0 })
        .execute()
      return app
    },
    async findById(appId) {
      const row = await db
        .selectFrom('applications')
        .selectAll()
        .where('app_id', '=', appId)
        .executeTakeFirst()
      return row && { ...row, partner: row.partner === 1 }
    },
    async addKey(appId, key) {
      const added = await db
        .insertInto('application_keys')
        .values({
          app_id: appId,
          kid: key.kid,
          public_jwk: JSON.stringify(key.jwk),
          created_at: new Date().toISOString(),
        })
        .onConflict((conflict) => conflict.columns(['app_id', 'kid']).doNothing())
        .executeTakeFirst()
      return Number(added.numInsertedOrUpdatedRows ?? 0) === 1
    },
    async keys(appId, kid) {
      let query = db
        .selectFrom('application_keys')
        .select(['kid', 'public_jwk'])
        .where('app_id', '=', appId)
        .orderBy('created_at')
        .orderBy('kid')
      if (kid !== undefined) query = query.where('kid', '=', kid)
      const rows = await query.execute()
      return rows.map((row) => ({ kid: row.kid, jwk: JSON.parse(row.public_jwk) as Record<string, unknown> }))
    },
    useAssertion: (appId, jti, expiresAt, now) =>
      inTransaction(sql, async (tx) => {
        await tx.db.deleteFrom('used_assertions').where('expires_at', '<=', now).execute()
        const inserted = await tx.db
          .insertInto('used_assertions')
          .values({ app_id: appId, jti, expires_at: expiresAt })
          .onConflict((conflict) => conflict.columns(['app_id', 'jti']).doNothing())
          .executeTakeFirst()
        return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1
      }),
    async install(appId, accountId, permissions) {
      const installation = {
        installation_id: randomUUID(),
        app_id: appId,
        account_id: accountId,
        permissions: [...permissions],
        created_at: new Date().toISOString(),
      }
      await db
        .insertInto('app_installations')
        .values({ ...installation, permissions: permissions.join(' '), active: 1 })
        .execute()
      const account = await db
        .selectFrom('accounts')
        .select('state')
        .where('account_id', '=', accountId)
        .executeTakeFirst()
      return { ...installation, active: account?.state === 'active' }
    },
    async findInstallation(installationId) {
      const row = await installationQuery().where('i.installation_id', '=', installationId).executeTakeFirst()
      return row && toInstallation(row)
    },
    async installationOf(appId, accountId) {
      const row = await installationQuery()
        .where('i.app_id', '=', appId)
        .where('i.account_id', '=', accountId)
        .executeTakeFirst()
      return row && toInstallation(row)
    },
    deactivateInstallation: (installationId) =>
      inTransaction(sql, async ({ db: tx }) => {
        await tx
          .updateTable('app_installations')
          .set({ active: 0 })
          .where('installation_id', '=', installationId)
          .execute()
        await tx.deleteFrom('installation_tokens').where('installation_id', '=', installationId).execute()
      }),
    async storeToken(tokenHash, token) {
      await db
        .insertInto('installation_tokens')
        .values({
          token_hash: tokenHash,
          installation_id: token.installation_id,
          account_id: token.account_id,
          scopes: token.scopes.join(' '),
          expires_at: token.expires_at,
          created_at: new Date().toISOString(),
        })
        .execute()
    },
    async findToken(tokenHash, now) {
      const row = await db
        .selectFrom('installation_tokens as t')
        .innerJoin('app_installations as i', 'i.installation_id', 't.installation_id')
        .innerJoin('accounts as a', 'a.account_id', 't.account_id')
        .select(['t.installation_id', 't.account_id', 't.scopes', 't.expires_at'])
        .where('t.token_hash', '=', tokenHash)
        .where('t.expires_at', '>', now)
        .where('i.active', '=', 1)
        .where('a.state', '=', 'active')
        .executeTakeFirst()
      return row && { ...row, scopes: splitScopes(row.scopes) }
    },
    deleteExpiredTokens: async (now) =>
      affected(await db.deleteFrom('installation_tokens').where('expires_at', '<=', now).executeTakeFirst()),
  }
}

import { randomUUID } from 'node:crypto'
import type { Scope } from '../../protocol/enums.ts'
import { batchedLookup } from './batched.ts'
import { affected, inTransaction, type Sql } from './engine.ts'

export interface ApiClient {
  client_id: string
  account_id: string
  /** Given in the console or with `client create --name`; null for a client made without one. */
  name: string | null
  secret_hash: Buffer
  scopes: Scope[]
  created_at: string
  revoked_at: string | null
}

export interface IssuedToken {
  account_id: string
  client_id: string
  scopes: Scope[]
  expires_at: number
}

export interface ApiClientRepository {
  create(
    accountId: string,
    secretHash: Buffer,
    scopes: readonly Scope[],
    name?: string | null,
  ): Promise<ApiClient>
  findById(clientId: string): Promise<ApiClient | undefined>
  /** Stores an access token by its hash; `expiresAt` in epoch milliseconds. */
  storeToken(tokenHash: Buffer, token: IssuedToken): Promise<void>
  /** The unexpired token with this hash, if any, unless its client was revoked or its account is not active. */
  findToken(tokenHash: Buffer, now: number): Promise<IssuedToken | undefined>
  /**
   * Revokes the client: its secret gets no more tokens and its tokens are deleted (findToken also checks,
   * so a token issued while this runs is refused too). Returns the client as revoked, or undefined when
   * there is no such client; revoking twice keeps the first time.
   */
  revoke(clientId: string, now: Date): Promise<ApiClient | undefined>
  deleteExpiredTokens(now: number): Promise<number>
  /** The account's clients, oldest first, without their secret hashes (the operator's CLI, the console). */
  listForAccount(accountId: string): Promise<Omit<ApiClient, 'secret_hash'>[]>
  /**
   * The account's clients that may get tokens (not revoked, the account active), oldest first, with their
   * secret hashes: what the account's hubs check credentials against offline (routes/agent-lan-credentials.ts).
   */
  listLiveWithSecrets(accountId: string): Promise<Pick<ApiClient, 'client_id' | 'scopes' | 'secret_hash'>[]>
}

const splitScopes = (scopes: string) => (scopes === '' ? [] : (scopes.split(' ') as Scope[]))

export function createApiClientRepository(sql: Sql): ApiClientRepository {
  const { db } = sql
  const findById = async (clientId: string, on = db) => {
    // A client id comes from the token request as sent; one with a NUL names no client (and PostgreSQL's
    // text cannot hold it: the query would fail).
    if (clientId.includes('\u0000')) return undefined
    const row = await on
      .selectFrom('api_clients')
      .selectAll()
      .where('client_id', '=', clientId)
      .executeTakeFirst()
    return row && { ...row, scopes: splitScopes(row.scopes) }
  }
  const tokenByHash = batchedLookup(sql, {
    select: (tokenHashes: readonly Buffer[]) =>
      db
        .selectFrom('access_tokens as t')
        .innerJoin('api_clients as c', 'c.client_id', 't.client_id')
        .innerJoin('accounts as a', 'a.account_id', 't.account_id')
        .select(['t.token_hash', 't.account_id', 't.client_id', 't.scopes', 't.expires_at'])
        .where('t.token_hash', 'in', tokenHashes)
        .where('c.revoked_at', 'is', null)
        // A suspended or closed account's tokens stop working (docs/developer-platform.md).
        .where('a.state', '=', 'active'),
    keyOfRow: (row) => Buffer.from(row.token_hash).toString('hex'),
    keyText: (hash) => hash.toString('hex'),
  })
  return {
    async create(accountId, secretHash, scopes, name = null) {
      const client = {
        client_id: randomUUID(),
        account_id: accountId,
        name,
        secret_hash: secretHash,
        scopes: [...scopes],
        created_at: new Date().toISOString(),
        revoked_at: null,
      }
      await db
        .insertInto('api_clients')
        .values({ ...client, scopes: scopes.join(' ') })
        .execute()
      return client
    },
    findById: (clientId) => findById(clientId),
    async storeToken(tokenHash, token) {
      await db
        .insertInto('access_tokens')
        .values({
          token_hash: tokenHash,
          client_id: token.client_id,
          account_id: token.account_id,
          scopes: token.scopes.join(' '),
          expires_at: token.expires_at,
          created_at: new Date().toISOString(),
        })
        .execute()
    },
    async findToken(tokenHash, now) {
      const row = await tokenByHash(tokenHash)
      if (!row || row.expires_at <= now) return undefined
      const { account_id, client_id, scopes, expires_at } = row
      return { account_id, client_id, scopes: splitScopes(scopes), expires_at }
    },
    revoke: (clientId, now) =>
      inTransaction(sql, async ({ db: tx }) => {
        await tx
          .updateTable('api_clients')
          .set({ revoked_at: now.toISOString() })
          .where('client_id', '=', clientId)
          .where('revoked_at', 'is', null)
          .execute()
        await tx.deleteFrom('access_tokens').where('client_id', '=', clientId).execute()
        return findById(clientId, tx)
      }),
    deleteExpiredTokens: async (now) =>
      affected(await db.deleteFrom('access_tokens').where('expires_at', '<=', now).executeTakeFirst()),
    async listForAccount(accountId) {
      const rows = await db
        .selectFrom('api_clients')
        .select(['client_id', 'account_id', 'name', 'scopes', 'created_at', 'revoked_at'])
        .where('account_id', '=', accountId)
        .orderBy('created_at')
        .orderBy('client_id')
        .execute()
      return rows.map((row) => ({ ...row, scopes: splitScopes(row.scopes) }))
    },
    async listLiveWithSecrets(accountId) {
      const rows = await db
        .selectFrom('api_clients as c')
        .innerJoin('accounts as a', 'a.account_id', 'c.account_id')
        .select(['c.client_id', 'c.scopes', 'c.secret_hash'])
        .where('c.account_id', '=', accountId)
        .where('c.revoked_at', 'is', null)
        // As findToken: a suspended or closed account's clients get no tokens, here none on the LAN either.
        .where('a.state', '=', 'active')
        .orderBy('c.created_at')
        .orderBy('c.client_id')
        .execute()
      return rows.map((row) => ({ ...row, scopes: splitScopes(row.scopes) }))
    },
  }
}

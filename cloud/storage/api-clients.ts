import { randomUUID } from 'node:crypto'
import type { Scope } from '../../protocol/enums.ts'
import type { SqliteDatabase } from './database.ts'

export interface ApiClient {
  client_id: string
  account_id: string
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
  create(accountId: string, secretHash: Buffer, scopes: readonly Scope[]): ApiClient
  findById(clientId: string): ApiClient | undefined
  /** Stores an access token by its hash; `expiresAt` in epoch milliseconds. */
  storeToken(tokenHash: Buffer, token: IssuedToken): void
  /** The unexpired token with this hash, if any, unless its client was revoked. */
  findToken(tokenHash: Buffer, now: number): IssuedToken | undefined
  /**
   * Revokes the client: its secret gets no more tokens and its tokens are deleted (findToken also checks,
   * so a token issued while this runs is refused too). Returns the client as revoked, or undefined when
   * there is no such client; revoking twice keeps the first time.
   */
  revoke(clientId: string, now: Date): ApiClient | undefined
  deleteExpiredTokens(now: number): number
  /** The account's clients, oldest first, without their secret hashes (for the operator's CLI). */
  listForAccount(accountId: string): Omit<ApiClient, 'secret_hash'>[]
}

interface ClientRow extends Omit<ApiClient, 'scopes'> {
  scopes: string
}
interface TokenRow extends Omit<IssuedToken, 'scopes'> {
  scopes: string
}

export function createApiClientRepository(db: SqliteDatabase): ApiClientRepository {
  const insertClient = db.prepare(
    'INSERT INTO api_clients (client_id, account_id, secret_hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const clientById = db.prepare<[string], ClientRow>('SELECT * FROM api_clients WHERE client_id = ?')
  const insertToken = db.prepare(
    'INSERT INTO access_tokens (token_hash, client_id, account_id, scopes, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const tokenByHash = db.prepare<[Buffer, number], TokenRow>(
    `SELECT t.account_id, t.client_id, t.scopes, t.expires_at FROM access_tokens t
     JOIN api_clients c ON c.client_id = t.client_id
     WHERE t.token_hash = ? AND t.expires_at > ? AND c.revoked_at IS NULL`,
  )
  const markRevoked = db.prepare(
    'UPDATE api_clients SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL',
  )
  const deleteClientTokens = db.prepare('DELETE FROM access_tokens WHERE client_id = ?')
  const revokeClient = db.transaction((clientId: string, at: string) => {
    markRevoked.run(at, clientId)
    deleteClientTokens.run(clientId)
    return clientById.get(clientId)
  })
  const deleteExpired = db.prepare('DELETE FROM access_tokens WHERE expires_at <= ?')
  const clientsOf = db.prepare<[string], Omit<ClientRow, 'secret_hash'>>(
    'SELECT client_id, account_id, scopes, created_at, revoked_at FROM api_clients WHERE account_id = ? ORDER BY created_at',
  )
  const splitScopes = (scopes: string) => (scopes === '' ? [] : (scopes.split(' ') as Scope[]))
  return {
    create(accountId, secretHash, scopes) {
      const client = {
        client_id: randomUUID(),
        account_id: accountId,
        secret_hash: secretHash,
        scopes: [...scopes],
        created_at: new Date().toISOString(),
        revoked_at: null,
      }
      insertClient.run(client.client_id, accountId, secretHash, scopes.join(' '), client.created_at)
      return client
    },
    findById(clientId) {
      const row = clientById.get(clientId)
      return row && { ...row, scopes: splitScopes(row.scopes) }
    },
    storeToken(tokenHash, token) {
      insertToken.run(
        tokenHash,
        token.client_id,
        token.account_id,
        token.scopes.join(' '),
        token.expires_at,
        new Date().toISOString(),
      )
    },
    findToken(tokenHash, now) {
      const row = tokenByHash.get(tokenHash, now)
      return row && { ...row, scopes: splitScopes(row.scopes) }
    },
    revoke(clientId, now) {
      const row = revokeClient.immediate(clientId, now.toISOString())
      return row && { ...row, scopes: splitScopes(row.scopes) }
    },
    deleteExpiredTokens: (now) => deleteExpired.run(now).changes,
    listForAccount: (accountId) =>
      clientsOf.all(accountId).map((row) => ({ ...row, scopes: splitScopes(row.scopes) })),
  }
}

import { Value } from 'typebox/value'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { StoredText } from '../../protocol/stored-text.ts'
import type { ApiClient } from '../storage/api-clients.ts'
import type { Storage } from '../storage/storage.ts'

/** An API client's name: what its owner calls it in the console (1 to 100 characters, no NUL). */
export const ApiClientName = StoredText({ minLength: 1, maxLength: 100 })

export const isApiClientName = (name: string): boolean => Value.Check(ApiClientName, name)

export const isScope = (text: string): text is Scope => (SCOPES as readonly string[]).includes(text)

export interface NewApiClient {
  client: ApiClient
  /** The client secret in clear: shown once, stored only as its SHA-256 digest. */
  secret: string
}

/**
 * Creates an account's API client with a new secret (the operator's `client create` and the console's API
 * clients page both make them here). Scopes are kept once each, in the order given.
 */
export async function createApiClient(
  storage: Storage,
  accountId: string,
  scopes: readonly Scope[],
  name: string | null = null,
): Promise<NewApiClient> {
  const secret = generateSecret('cs')
  const client = await storage.apiClients.create(accountId, hashSecret(secret), [...new Set(scopes)], name)
  return { client, secret }
}

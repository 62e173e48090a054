import { randomUUID } from 'node:crypto'
import { batchedLookup } from './batched.ts'
import type { Sql } from './engine.ts'

export interface Account {
  account_id: string
  name: string
  created_at: string
}

export interface AccountRepository {
  create(name: string): Promise<Account>
  findById(accountId: string): Promise<Account | undefined>
  /** Whether the account is active (not suspended or closed: docs/developer-platform.md); false if unknown. */
  isActive(accountId: string): Promise<boolean>
  /** Every account, oldest first (for the operator's CLI). */
  listAll(): Promise<Account[]>
}

export function createAccountRepository(sql: Sql): AccountRepository {
  const { db } = sql
  const columns = ['account_id', 'name', 'created_at'] as const
  const stateOf = batchedLookup(sql, {
    select: (accountIds: readonly string[]) =>
      db.selectFrom('accounts').select(['account_id', 'state']).where('account_id', 'in', accountIds),
    keyOfRow: (row) => row.account_id,
  })
  return {
    async create(name) {
      const account = { account_id: randomUUID(), name, created_at: new Date().toISOString() }
      await db.insertInto('accounts').values(account).execute()
      return account
    },
    findById: (accountId) =>
      db.selectFrom('accounts').select(columns).where('account_id', '=', accountId).executeTakeFirst(),
    isActive: async (accountId) => (await stateOf(accountId))?.state === 'active',
    listAll: () =>
      db.selectFrom('accounts').select(columns).orderBy('created_at').orderBy('account_id').execute(),
  }
}

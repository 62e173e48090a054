import { randomUUID } from 'node:crypto'
import type { SqliteDatabase } from './database.ts'

export interface Account {
  account_id: string
  name: string
  created_at: string
}

export interface AccountRepository {
  create(name: string): Account
  findById(accountId: string): Account | undefined
  /** Every account, oldest first (for the operator's CLI). */
  listAll(): Account[]
}

export function createAccountRepository(db: SqliteDatabase): AccountRepository {
  const insert = db.prepare('INSERT INTO accounts (account_id, name, created_at) VALUES (?, ?, ?)')
  const byId = db.prepare<[string], Account>(
    'SELECT account_id, name, created_at FROM accounts WHERE account_id = ?',
  )
  const all = db.prepare<[], Account>('SELECT account_id, name, created_at FROM accounts ORDER BY created_at')
  return {
    create(name) {
      const account = { account_id: randomUUID(), name, created_at: new Date().toISOString() }
      insert.run(account.account_id, account.name, account.created_at)
      return account
    },
    findById: (accountId) => byId.get(accountId),
    listAll: () => all.all(),
  }
}

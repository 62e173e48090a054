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
}

export function createAccountRepository(db: SqliteDatabase): AccountRepository {
  const insert = db.prepare('INSERT INTO accounts (account_id, name, created_at) VALUES (?, ?, ?)')
  const byId = db.prepare<[string], Account>(
    'SELECT account_id, name, created_at FROM accounts WHERE account_id = ?',
  )
  return {
    create(name) {
      const account = { account_id: randomUUID(), name, created_at: new Date().toISOString() }
      insert.run(account.account_id, account.name, account.created_at)
      return account
    },
    findById: (accountId) => byId.get(accountId),
  }
}

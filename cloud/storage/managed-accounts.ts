import { randomUUID } from 'node:crypto'
import type { Scope } from '../../protocol/enums.ts'
import type { PageOf } from '../../protocol/pagination.ts'
import type {
  AccountAction,
  HealthSummary,
  ManagedAccount,
  ManagedAccountState,
} from '../../protocol/partner.ts'
import { isBlocking, type PrinterHealth } from '../../protocol/printer-health.ts'
import { forUpdate, inTransaction, type Sql } from './engine.ts'
import { pageAfter } from './paging.ts'
import { onlineWithHub } from './printers.ts'

export interface NewManagedAccount {
  appId: string
  accountId: string
  installationId: string
  externalCustomerId: string
}

export type TransitionOutcome =
  | { outcome: 'done'; account: ManagedAccount }
  | { outcome: 'not_found' }
  | { outcome: 'not_allowed'; state: ManagedAccountState }

export interface ManagedAccountRepository {
  create(relationship: NewManagedAccount): Promise<ManagedAccount>
  /** The relationship, only when the application `appId` owns it. */
  find(appId: string, relationshipId: string): Promise<ManagedAccount | undefined>
  findByExternalId(appId: string, externalCustomerId: string): Promise<ManagedAccount | undefined>
  /** Newest first; `cursor` is the last relationship id of the previous page (unknown → undefined). */
  list(
    appId: string,
    limit: number,
    cursor: string | undefined,
    externalCustomerId: string | undefined,
  ): Promise<PageOf<ManagedAccount> | undefined>
  /**
   * Applies `action` by the state rules (docs/developer-platform.md): suspend any non-closed account, resume a
   * suspended one, close any (closing a closed one changes nothing). Closing revokes the account's API
   * clients and their tokens, its installation and its tokens, its hubs and its pending enrollments, in
   * the same transaction.
   */
  transition(
    appId: string,
    relationshipId: string,
    action: AccountAction,
    now: Date,
  ): Promise<TransitionOutcome>
}

/** Where each action may start, and where it leads. */
const RULES: Record<AccountAction, { from: readonly ManagedAccountState[]; to: ManagedAccountState }> = {
  suspend: { from: ['active', 'suspended'], to: 'suspended' },
  resume: { from: ['suspended'], to: 'active' },
  close: { from: ['active', 'suspended', 'closed'], to: 'closed' },
}

/** Printer states that need someone on site; `unknown` (no status answer) and `busy` do not. */
const needsAttention = (health: string | null) => {
  if (health === null) return false
  const { state } = JSON.parse(health) as PrinterHealth
  return isBlocking(state) || !['ready', 'busy', 'unknown'].includes(state)
}

const emptySummary = (): HealthSummary => ({
  agents: { total: 0, online: 0, offline: 0 },
  printers: { total: 0, online: 0, offline: 0, needs_attention: 0 },
})

interface Row {
  relationship_id: string
  account_id: string
  installation_id: string
  external_customer_id: string
  name: string
  permissions: string
  state: string
  created_at: string
  updated_at: string
}

export function createManagedAccountRepository(sql: Sql): ManagedAccountRepository {
  const { db } = sql
  const select = (on = db) =>
    on
      .selectFrom('managed_accounts as m')
      .innerJoin('accounts as a', 'a.account_id', 'm.account_id')
      .innerJoin('app_installations as i', 'i.installation_id', 'm.installation_id')
      .select([
        'm.relationship_id',
        'm.account_id',
        'm.installation_id',
        'm.external_customer_id',
        'a.name',
        'i.permissions',
        'a.state',
        'm.created_at',
        'm.updated_at',
      ])

  /** Hub and printer counts of each account, in two queries for a whole page. */
  async function summaries(accountIds: string[], on = db): Promise<Map<string, HealthSummary>> {
    const byAccount = new Map(accountIds.map((id) => [id, emptySummary()]))
    if (accountIds.length === 0) return byAccount
    const agents = await on
      .selectFrom('agents')
      .select(['account_id', 'online'])
      .where('account_id', 'in', accountIds)
      .where('revoked_at', 'is', null)
      .execute()
    for (const agent of agents) {
      const summary = byAccount.get(agent.account_id)?.agents
      if (!summary) continue
      summary.total += 1
      if (agent.online === 1) summary.online += 1
      else summary.offline += 1
    }
    const printers = await on
      .selectFrom('printers')
      .select(['account_id', 'health', onlineWithHub])
      .where('account_id', 'in', accountIds)
      .where('removed_at', 'is', null)
      .execute()
    for (const printer of printers) {
      const summary = byAccount.get(printer.account_id)?.printers
      if (!summary) continue
      summary.total += 1
      if (printer.online === 1) summary.online += 1
      else summary.offline += 1
      if (needsAttention(printer.health)) summary.needs_attention += 1
    }
    return byAccount
  }

  const toManaged = (row: Row, health: HealthSummary): ManagedAccount => ({
    relationship_id: row.relationship_id,
    account_id: row.account_id,
    installation_id: row.installation_id,
    external_customer_id: row.external_customer_id,
    name: row.name,
    permissions: (row.permissions === '' ? [] : row.permissions.split(' ')) as Scope[],
    state: row.state as ManagedAccountState,
    created_at: row.created_at,
    updated_at: row.updated_at,
    health,
  })

  async function withHealth(row: Row | undefined, on = db): Promise<ManagedAccount | undefined> {
    if (!row) return undefined
    const health = (await summaries([row.account_id], on)).get(row.account_id) ?? emptySummary()
    return toManaged(row, health)
  }

  return {
    async create(relationship) {
      const at = new Date().toISOString()
      const relationshipId = randomUUID()
      await db
        .insertInto('managed_accounts')
        .values({
          relationship_id: relationshipId,
          app_id: relationship.appId,
          account_id: relationship.accountId,
          installation_id: relationship.installationId,
          external_customer_id: relationship.externalCustomerId,
          created_at: at,
          updated_at: at,
        })
        .execute()
      const created = await withHealth(
        await select().where('m.relationship_id', '=', relationshipId).executeTakeFirst(),
      )
      if (!created) throw new Error('managed account vanished after its insert')
      return created
    },
    find: async (appId, relationshipId) =>
      withHealth(
        await select()
          .where('m.app_id', '=', appId)
          .where('m.relationship_id', '=', relationshipId)
          .executeTakeFirst(),
      ),
    findByExternalId: async (appId, externalCustomerId) =>
      withHealth(
        await select()
          .where('m.app_id', '=', appId)
          .where('m.external_customer_id', '=', externalCustomerId)
          .executeTakeFirst(),
      ),
    async list(appId, limit, cursor, externalCustomerId) {
      const rows: Row[] = []
      const page = await pageAfter(db, {
        list: { table: 'managed_accounts', id: 'relationship_id', scope: { app_id: appId } },
        cursor,
        limit,
        fetch: async (seq) => {
          let query = select().where('m.app_id', '=', appId).where('m.seq', '<', seq)
          if (externalCustomerId !== undefined) {
            query = query.where('m.external_customer_id', '=', externalCustomerId)
          }
          return query
            .orderBy('m.seq', 'desc')
            .limit(limit + 1)
            .execute()
        },
        map: (row: Row) => {
          rows.push(row)
          return row
        },
        idOf: (row) => row.relationship_id,
      })
      if (!page) return undefined
      const health = await summaries(rows.map((row) => row.account_id))
      return {
        data: page.data.map((row) => toManaged(row, health.get(row.account_id) ?? emptySummary())),
        next_cursor: page.next_cursor,
      }
    },
    transition: (appId, relationshipId, action, now) =>
      inTransaction(sql, async (tx): Promise<TransitionOutcome> => {
        const owned = await forUpdate(
          tx,
          tx.db
            .selectFrom('managed_accounts')
            .select(['account_id', 'installation_id'])
            .where('app_id', '=', appId)
            .where('relationship_id', '=', relationshipId),
        ).executeTakeFirst()
        if (!owned) return { outcome: 'not_found' }
        const account = await forUpdate(
          tx,
          tx.db.selectFrom('accounts').select('state').where('account_id', '=', owned.account_id),
        ).executeTakeFirst()
        const state = (account?.state ?? 'closed') as ManagedAccountState
        const rule = RULES[action]
        if (!rule.from.includes(state)) return { outcome: 'not_allowed', state }
        const at = now.toISOString()
        if (state !== rule.to) {
          await tx.db
            .updateTable('accounts')
            .set({ state: rule.to })
            .where('account_id', '=', owned.account_id)
            .execute()
          await tx.db
            .updateTable('managed_accounts')
            .set({ updated_at: at })
            .where('relationship_id', '=', relationshipId)
            .execute()
          if (rule.to === 'closed') await closeAccount(tx, owned, at)
        }
        const updated = await withHealth(
          await select(tx.db).where('m.relationship_id', '=', relationshipId).executeTakeFirst(),
          tx.db,
        )
        if (!updated) return { outcome: 'not_found' }
        return { outcome: 'done', account: updated }
      }),
  }
}

/** Every credential of a closed account stops for good; its hubs are revoked (the broker drops them). */
async function closeAccount(
  tx: Sql,
  owned: { account_id: string; installation_id: string },
  at: string,
): Promise<void> {
  const { db } = tx
  await db
    .updateTable('api_clients')
    .set({ revoked_at: at })
    .where('account_id', '=', owned.account_id)
    .where('revoked_at', 'is', null)
    .execute()
  await db.deleteFrom('access_tokens').where('account_id', '=', owned.account_id).execute()
  await db
    .updateTable('app_installations')
    .set({ active: 0 })
    .where('account_id', '=', owned.account_id)
    .execute()
  await db.deleteFrom('installation_tokens').where('account_id', '=', owned.account_id).execute()
  await db
    .updateTable('agents')
    .set({ revoked_at: at })
    .where('account_id', '=', owned.account_id)
    .where('revoked_at', 'is', null)
    .execute()
  await db
    .updateTable('enrollments')
    .set({ state: 'revoked', revoked_at: at })
    .where('account_id', '=', owned.account_id)
    .where('state', '=', 'pending')
    .execute()
}

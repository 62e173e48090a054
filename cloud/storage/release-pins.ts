import { Value } from 'typebox/value'
import { HubUpdate } from '../../protocol/hub-messages.ts'
import { affected, type Sql } from './engine.ts'

/** What decides which release a hub runs (docs/hub-updates.md), and how its latest update went. */
export interface HubReleaseRecord {
  agent_id: string
  account_id: string
  /** The version it reported running; null before its first state report. */
  version: string | null
  account_pin: string | null
  hub_pin: string | null
  update: HubUpdate | null
}

/** The columns of a HubReleaseRecord as queries select them (agents' and its account's). */
export interface HubReleaseRow {
  agent_id: string
  account_id: string
  version: string | null
  hub_pin: string | null
  account_pin: string | null
  update_report: string | null
}

export const toHubReleaseRecord = (row: HubReleaseRow): HubReleaseRecord => ({
  agent_id: row.agent_id,
  account_id: row.account_id,
  version: row.version,
  account_pin: row.account_pin,
  hub_pin: row.hub_pin,
  update: parseUpdate(row.update_report),
})

export interface ReleasePinRepository {
  /** Pins the account's hubs to `version`, or unpins them (null). False when there is no such account. */
  pinAccount(accountId: string, version: string | null): Promise<boolean>
  /** Pins one hub to `version`, or unpins it (null). False when there is no such hub. */
  pinHub(agentId: string, version: string | null): Promise<boolean>
  forHub(agentId: string): Promise<HubReleaseRecord | undefined>
  /** Keeps the hub's latest update as it reported it (null: it reported none). */
  recordUpdate(agentId: string, update: HubUpdate | null): Promise<void>
}

function parseUpdate(text: string | null): HubUpdate | null {
  if (text === null) return null
  try {
    const value: unknown = JSON.parse(text)
    return Value.Check(HubUpdate, value) ? value : null
  } catch {
    return null
  }
}

export function createReleasePinRepository({ db }: Sql): ReleasePinRepository {
  return {
    async pinAccount(accountId, version) {
      const result = await db
        .updateTable('accounts')
        .set({ release_pin: version })
        .where('account_id', '=', accountId)
        .executeTakeFirst()
      return affected(result) === 1
    },
    async pinHub(agentId, version) {
      const result = await db
        .updateTable('agents')
        .set({ release_pin: version })
        .where('agent_id', '=', agentId)
        .executeTakeFirst()
      return affected(result) === 1
    },
    async forHub(agentId) {
      const row = await db
        .selectFrom('agents')
        .innerJoin('accounts', 'accounts.account_id', 'agents.account_id')
        .select([
          'agents.agent_id',
          'agents.account_id',
          'agents.version',
          'agents.release_pin as hub_pin',
          'accounts.release_pin as account_pin',
          'agents.update_report',
        ])
        .where('agents.agent_id', '=', agentId)
        .executeTakeFirst()
      return row && toHubReleaseRecord(row)
    },
    async recordUpdate(agentId, update) {
      await db
        .updateTable('agents')
        .set({ update_report: update === null ? null : JSON.stringify(update) })
        .where('agent_id', '=', agentId)
        .execute()
    },
  }
}

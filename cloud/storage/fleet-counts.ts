import type { Sql } from './engine.ts'

export type UnfinishedStatus = 'pending' | 'reserved' | 'printing'
export const UNFINISHED_STATUSES: readonly UnfinishedStatus[] = ['pending', 'reserved', 'printing']

/** Counts over the whole fleet, for the metrics gauges: each one aggregate query over an index. */
export interface FleetCountRepository {
  /** Jobs not finished yet, by status (every account's queues together). */
  unfinishedJobsByStatus(): Promise<Record<UnfinishedStatus, number>>
  /** Hubs online, and printers online (named by their hub's latest report while the hub is online). */
  online(): Promise<{ hubs: number; printers: number }>
}

export function createFleetCountRepository({ db }: Sql): FleetCountRepository {
  return {
    async unfinishedJobsByStatus() {
      const rows = await db
        .selectFrom('print_jobs')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .where('status', 'in', UNFINISHED_STATUSES)
        .groupBy('status')
        .execute()
      const counts = { pending: 0, reserved: 0, printing: 0 }
      for (const row of rows) counts[row.status as UnfinishedStatus] = Number(row.n)
      return counts
    },
    async online() {
      const hubs = await db
        .selectFrom('agents')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('online', '=', 1)
        .executeTakeFirstOrThrow()
      const printers = await db
        .selectFrom('printers')
        .innerJoin('agents', 'agents.agent_id', 'printers.agent_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('printers.reported', '=', 1)
        .where('agents.online', '=', 1)
        .executeTakeFirstOrThrow()
      return { hubs: Number(hubs.n), printers: Number(printers.n) }
    },
  }
}

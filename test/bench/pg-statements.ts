import pg from 'pg'

/** The server settings that make PostgreSQL keep statistics per statement. */
export const STATEMENT_STATISTICS = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'all',
  'pg_stat_statements.track_planning': 'on',
}

export type StatementStatistics = Awaited<ReturnType<typeof statementStatistics>>

/**
 * What PostgreSQL spent its time on, per statement (pg_stat_statements), to study one phase of a benchmark:
 * `reset` at its start, `top` at its end. The server must run with STATEMENT_STATISTICS.
 */
export async function statementStatistics(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  return {
    async reset() {
      await client.query('SELECT pg_stat_statements_reset()')
    },
    /**
     * The `limit` statements that took the most time (planning and execution), or were called most often
     * (BENCH_PG_STATEMENTS_ORDER=calls), one line each.
     */
    async top(limit: number): Promise<string[]> {
      const order =
        process.env.BENCH_PG_STATEMENTS_ORDER === 'calls' ? 'calls' : 'total_exec_time + total_plan_time'
      const { rows } = await client.query<{
        ms: number
        plan_ms: number
        calls: string
        plans: string
        rows: string
        query: string
      }>(
        `SELECT total_exec_time AS ms, total_plan_time AS plan_ms, calls, plans, rows, query
           FROM pg_stat_statements ORDER BY ${order} DESC LIMIT $1`,
        [limit],
      )
      const { rows: totals } = await client.query<{ ms: number; calls: string }>(
        'SELECT sum(total_exec_time) AS ms, sum(calls) AS calls FROM pg_stat_statements',
      )
      const total = `${Number(totals[0]?.ms ?? 0)
        .toFixed(0)
        .padStart(7)} ms exec in all, ${totals[0]?.calls} calls`
      return [
        total,
        ...rows.map(
          (row) =>
            `${row.ms.toFixed(0).padStart(7)} ms exec ${row.plan_ms.toFixed(0).padStart(5)} ms plan ${String(row.calls).padStart(7)} calls ${String(row.plans).padStart(6)} planned ${String(row.rows).padStart(7)} rows  ${row.query.replace(/\s+/g, ' ').slice(0, 160)}`,
        ),
      ]
    },
    close: () => client.end(),
  }
}

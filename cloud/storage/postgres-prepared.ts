import { createHash } from 'node:crypto'
import type { PostgresPool, PostgresPoolClient } from 'kysely'
import type pg from 'pg'

/** Named statements one connection keeps at most; past it, a new SQL text runs unnamed (parsed and planned). */
export const PREPARED_PER_CONNECTION = 500

/** PostgreSQL's `cached plan must not change result type` (a table a prepared `select *` reads was altered). */
const FEATURE_NOT_SUPPORTED = '0A000'

/**
 * The pool as Kysely's PostgreSQL driver sees it, with every query a named prepared statement of its
 * connection: PostgreSQL parses and plans a statement once per connection instead of at every run. Planning
 * was most of the server's time per query here (pg_stat_statements over the multi-node benchmark: 15.8 s of
 * planning against 7.4 s of execution while 19,500 hubs reconnected; 0.35 ms to plan the three-table join
 * that finds a hub's jobs, 0.05 ms to run it). After five runs PostgreSQL keeps a generic plan where it costs
 * no more than planning each time (plan_cache_mode `auto`).
 *
 * A node still running when another node's migration alters a table gets that error once per statement and
 * connection: outside a transaction the statement runs again unnamed at once; inside one the transaction
 * fails (the caller's retry applies). Either way that statement runs unnamed on that connection from then on.
 * A pooler in transaction mode in front of PostgreSQL must support prepared statements (PgBouncer 1.21+:
 * `max_prepared_statements`).
 */
export function preparingPool(pool: pg.Pool, perConnection = PREPARED_PER_CONNECTION): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  return {
    async connect() {
      const client = await pool.connect()
      let preparing = wrapped.get(client)
      if (!preparing) {
        preparing = preparingClient(client, perConnection)
        wrapped.set(client, preparing)
      }
      return preparing
    },
    end: () => pool.end(),
  }
}

function preparingClient(client: pg.PoolClient, perConnection: number): PostgresPoolClient {
  const prepared = new Set<string>()
  const unnamed = new Set<string>()
  let inTransaction = false
  const run = async (text: string, values: unknown[]) => {
    const name = statementName(text)
    if (unnamed.has(name) || (!prepared.has(name) && prepared.size >= perConnection))
      return client.query(text, values)
    prepared.add(name)
    try {
      return await client.query({ name, text, values })
    } catch (error) {
      if ((error as { code?: unknown }).code !== FEATURE_NOT_SUPPORTED) throw error
      unnamed.add(name)
      if (inTransaction) throw error
      return client.query(text, values)
    }
  }
  const preparing = {
    query(textOrCursor: string | pg.Submittable, values?: readonly unknown[]) {
      if (typeof textOrCursor !== 'string') return client.query(textOrCursor)
      // Kysely's own transaction statements (`begin`, `start transaction …`, `commit`, `rollback`).
      if (textOrCursor === 'begin' || textOrCursor.startsWith('start transaction')) inTransaction = true
      else if (textOrCursor === 'commit' || textOrCursor === 'rollback') inTransaction = false
      return run(textOrCursor, [...(values ?? [])])
    },
    release: (destroy?: boolean) => client.release(destroy),
  }
  // A cursor (Kysely's streaming) goes to pg as it is; the overloads differ only in their types.
  return preparing as unknown as PostgresPoolClient
}

/** Names by SQL text, so that a text is hashed once: bounded, since texts with a list of values vary. */
const names = new Map<string, string>()
const NAMES_KEPT = 5000

function statementName(text: string): string {
  let name = names.get(text)
  if (name === undefined) {
    name = `k${createHash('sha1').update(text).digest('hex')}`
    if (names.size < NAMES_KEPT) names.set(text, name)
  }
  return name
}

import type { TestProject } from 'vitest/node'
import { openDatabase } from '../../cloud/storage/database.ts'
import { MIGRATED_TEMPLATE, type PostgresServer, startPostgres } from './postgres-server.ts'

/**
 * vitest's globalSetup: one PostgreSQL server for the whole run (an initdb and a start take seconds; a copy
 * of a template database, a fraction of one). Before any test file runs it starts the server, makes MIGRATED_TEMPLATE and
 * migrates it once, then closes every connection to it and forbids new ones (CREATE DATABASE … TEMPLATE fails
 * while a session is connected to the template). Workers learn the socket directory through `provide`; their
 * tests take databases with `testDatabases()`. The teardown stops the server and removes its directory, also
 * after failed tests.
 *
 * When projects inherit this file (several setups in this one process), they share the one server: the last
 * teardown stops it.
 */
interface RunServer {
  server: Promise<PostgresServer>
  users: number
}
const RUN_SERVER = Symbol.for('print-hub.test-postgres')
const shared = globalThis as { [RUN_SERVER]?: RunServer }

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  shared[RUN_SERVER] ??= { server: startWithTemplate(), users: 0 }
  const run = shared[RUN_SERVER]
  run.users += 1
  const server = await run.server
  project.provide('postgresDir', server.dir)
  return async () => {
    run.users -= 1
    if (run.users > 0) return
    delete shared[RUN_SERVER]
    await server.stop()
  }
}

async function startWithTemplate(): Promise<PostgresServer> {
  // Test files in parallel workers share it: room for each one's pools and cloud processes.
  const server = await startPostgres({ max_connections: '400' })
  // If the run ends without its teardown (an uncaught error in vitest itself), the server must not outlive it.
  const orphan = () => {
    try {
      process.kill(server.pid, 'SIGINT')
    } catch {}
  }
  process.once('exit', orphan)
  const stop = async () => {
    process.off('exit', orphan)
    await server.stop()
  }
  try {
    const url = await server.createDatabase({ name: MIGRATED_TEMPLATE })
    const database = await openDatabase({ postgresUrl: url })
    await database.close()
    await server.admin(`ALTER DATABASE ${MIGRATED_TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)
  } catch (error) {
    await stop()
    throw error
  }
  return { ...server, stop }
}

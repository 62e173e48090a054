import { statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type { Database as SqliteDatabase } from 'better-sqlite3'

/** The WAL's size on disk past which checkpoints move to the worker: SQLite's own threshold, 1,000 pages. */
const START_AT_WAL_BYTES = 1000 * 4096
/** How often the cloud looks at the WAL's size until then. */
const LOOK_EVERY_MS = 1000
/** How often the worker checkpoints. */
const CHECKPOINT_EVERY_MS = 100
/**
 * The cloud's connection still checkpoints by itself past this many pages (SQLite's `wal_autocheckpoint`), in
 * case the worker falls behind or is gone: the WAL stays bounded either way.
 */
const BACKSTOP_PAGES = 10_000

/**
 * The worker's code, a script of its own (no TypeScript loader needed): a second connection to the database
 * that runs a PASSIVE checkpoint every `everyMs` (https://sqlite.org/pragma.html#pragma_wal_checkpoint: it
 * copies what no reader still needs from the WAL to the database, waits for no lock, and lets writers go on).
 */
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads')
const Database = require(workerData.betterSqlite3)
const db = new Database(workerData.file)
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch {}
}, workerData.everyMs)
parentPort.once('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/**
 * WAL checkpoints on a worker thread instead of the cloud's event loop. SQLite checkpoints at the commit that
 * takes the WAL past 1,000 pages, on the connection that commits: it copies those pages into the database file
 * and syncs both files, a few milliseconds every few dozen commits. Under load that was 60 % of the time the
 * cloud spent committing (docs/performance.md, "Checkpoints off the event loop"). The worker starts once the
 * WAL has grown to that size, so that a cloud (or a test) that writes little never starts a thread.
 *
 * Durability is unchanged: a commit is in the WAL either way, and kill -9 loses nothing written to it.
 */
export function walCheckpointsInBackground(file: string, sqlite: SqliteDatabase): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined
  let worker: Worker | undefined
  const start = () => {
    clearInterval(look)
    worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3'),
        file,
        everyMs: CHECKPOINT_EVERY_MS,
      },
    })
    worker.unref()
    running = new Promise((resolve) => worker?.once('exit', resolve))
    // A worker that cannot open the file leaves the checkpoints to the cloud's connection (the backstop).
    worker.on('error', () => {})
    sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
  }
  const look = setInterval(() => {
    try {
      if ((statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) >= START_AT_WAL_BYTES) start()
    } catch {
      // Not readable now: looked at again in a second.
    }
  }, LOOK_EVERY_MS)
  look.unref()
  return {
    /** Ends the worker, after its checkpoint under way if any; the cloud's connection closes after. */
    async stop() {
      clearInterval(look)
      worker?.postMessage('stop')
      await running
    },
  }
}

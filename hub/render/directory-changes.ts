import { type FSWatcher, watch } from 'node:fs'

/** Counts the changes in a directory (inotify on Linux, through fs.watch) and wakes those waiting for one. */
export interface DirectoryChanges {
  /** Changes seen so far. */
  readonly count: number
  /** Resolves once `count` is above `seen`: at once if it already is. */
  after(seen: number): Promise<void>
  close(): void
}

/**
 * Watches `dir`. Where it cannot be watched (no inotify watches left), after() resolves only for changes
 * already seen, and the caller's own polling is all there is.
 */
export function watchDirectory(dir: string): DirectoryChanges {
  let count = 0
  let waiting: { promise: Promise<void>; resolve(): void } | undefined
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(dir, { persistent: false }, () => {
      count++
      waiting?.resolve()
      waiting = undefined
    })
    watcher.on('error', () => watcher?.close())
  } catch {
    watcher = undefined
  }
  return {
    get count() {
      return count
    },
    after(seen) {
      if (count > seen) return Promise.resolve()
      if (!waiting) {
        let resolve!: () => void
        const promise = new Promise<void>((done) => {
          resolve = done
        })
        waiting = { promise, resolve }
      }
      return waiting.promise
    },
    close() {
      watcher?.close()
    },
  }
}

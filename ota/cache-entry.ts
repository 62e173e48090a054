import { renameSync } from 'node:fs'

/**
 * Puts a directory made in the cache's scratch space (`staged`, on the same file system) in place as `dir`,
 * which other `ota build`s may be filling at the same moment. rename(2) of a directory onto a non-empty one
 * fails (ENOTEMPTY or EEXIST), so the first build to finish wins and the others keep what it put there;
 * only a `dir` that is not `complete` (left by a build of before) is moved aside to be replaced. Nothing in
 * place is ever removed while another build may be reading it.
 */
export function putInCache(staged: string, dir: string, complete: (dir: string) => boolean): void {
  for (let attempt = 0; ; attempt++) {
    try {
      renameSync(staged, dir)
      return
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
      if (complete(dir)) return
      if (attempt > 0) throw error
      // Aside, in the same directory (a rename, never a copy); the caller's scratch space goes with `staged`.
      renameSync(dir, `${dir}.stale-${process.pid}-${Date.now()}`)
    }
  }
}

/** A file's name to write it under before renaming it into place: no other process writes the same one. */
export function partialName(file: string): string {
  return `${file}.${process.pid}.partial`
}

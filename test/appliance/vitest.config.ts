import path from 'node:path'
import { defineConfig } from 'vitest/config'

/**
 * `npm run test:appliance`: the appliance boot test (docs/appliance-boot-test.md), apart from `npm test`'s
 * projects (vitest.config.ts excludes test/appliance/**). One file at a time: each boots a whole ARM machine
 * under TCG with -smp 2, which takes both cores of a 2-core machine. No PostgreSQL: the cloud it starts keeps
 * SQLite.
 */
export default defineConfig({
  root: path.resolve(import.meta.dirname, '../..'),
  test: {
    name: 'appliance',
    include: ['test/appliance/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 30 * 60_000,
    hookTimeout: 30 * 60_000,
    // The measurements the tests print belong in the output.
    silent: false,
  },
})

import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Test files share their worker's module cache: with a fresh one per file, importing the cloud (TypeBox,
    // Kysely, Fastify) again for each of ~200 files took 137 s of a 1,313 s run; shared, 14 s of 1,105 s.
    // No test changes process-wide state it does not restore (environment, global mocks, timers).
    isolate: false,
  },
})

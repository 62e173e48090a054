import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'

/**
 * Tests that start processes of their own: the cloud, hub or ota CLI, Mosquitto, Redis, HAProxy,
 * ippeveprinter, Chromium. Short tool calls (openssl, gs, socat, tsc) and the run's PostgreSQL server (the
 * globalSetup below) do not count: such tests are units. A test that starts a process belongs here.
 */
const E2E = [
  'test/e2e/**/*.test.ts',
  'test/browser/**/*.test.ts',
  'test/ota/**/*.test.ts',
  'test/cloud/{cli,cli-help}.test.ts',
  'test/hub/cli*.test.ts',
  'test/cloud/agent-downloads.test.ts',
  'test/cloud/health.test.ts',
  'test/cloud/api/rate-limit-redis.test.ts',
  'test/cloud/broker/{mosquitto-*,pre-login-probes,hub-front-tls}.test.ts',
  'test/cloud/metrics/{metrics-nodes,metrics-serve}.test.ts',
  'test/helpers/*-server.test.ts',
  'test/hub/ipp/{ipp-printer,pwg-raster-printer}.test.ts',
  'test/hub/lan/dns-sd.test.ts',
  'test/hub/update/{hub-updater,launcher}.test.ts',
]
/** The ARM packages under qemu-user-static: minutes of emulated CPU in one file. */
const ARM = ['test/ota/arm-package.test.ts']
/**
 * The Raspberry Pi card image built and read back without booting it (`ota image`, docs/appliance.md): ten
 * minutes and more, so in no project of the default run. `npm run test:image` sets PRINT_HUB_IMAGE_TEST, which
 * adds its project.
 */
const IMAGE = ['test/ota/image.build.test.ts']
/**
 * The appliance boot test boots a whole ARM machine under qemu-system-aarch64 (minutes each): not part of
 * `npm test`. `npm run test:appliance` runs it, with its own config (test/appliance/vitest.config.ts).
 */
const APPLIANCE = ['test/appliance/**']

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks',
  // Test files share their worker's module cache: with a fresh one per file, importing the cloud (TypeBox,
  // Kysely, Fastify) again for each of ~200 files took 137 s of a 1,313 s run; shared, 14 s of 1,105 s.
  // No test changes process-wide state it does not restore (environment, global mocks, timers).
  isolate: false,
} satisfies TestProjectInlineConfiguration['test']

/**
 * Two phases (vitest runs the groups of `sequence.groupOrder` one after the other, each project of a group
 * on the group's workers; a group's files are queued by project name, then longest first):
 * 1. `arm` and `unit`: the emulated ARM packages take one core for their ~3 minutes, the in-process units
 *    the other; the units do not mind a busy neighbour, and no process-starting test shares the machine
 *    with the emulator.
 * 2. `e2e`: one process-starting test file per core, so that no two of them have to share one.
 * `npx vitest run --project unit` (or e2e, arm) runs one of them.
 */
export default defineConfig({
  test: {
    // One PostgreSQL server for the whole run, with a migrated template database to copy per test.
    // Set on the root only: it runs once, and every project sees what it provides.
    globalSetup: ['test/helpers/postgres-global.ts'],
    // One test file per core at a time (vitest's default is one fewer: a single worker on 2 cores). Set on the
    // root, not per project, so that --maxWorkers and VITEST_MAX_WORKERS still apply; the projects of a group
    // must have the same number anyway.
    maxWorkers: availableParallelism(),
    projects: [
      { test: { ...shared, name: 'arm', include: ARM, sequence: { groupOrder: 0 } } },
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...E2E, ...APPLIANCE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'e2e',
          include: E2E,
          exclude: [...configDefaults.exclude, ...ARM, ...IMAGE],
          sequence: { groupOrder: 1 },
        },
      },
      ...(process.env.PRINT_HUB_IMAGE_TEST
        ? [{ test: { ...shared, name: 'image', include: IMAGE, testTimeout: 5 * 60_000 } }]
        : []),
    ],
  },
})

/**
 * `npm run soak`: the fault-and-race run of issue 6, point 10, at full size (SOAK_JOBS, default 1200) on a
 * random plan: the seed is SOAK_SEED, else a new one each run, printed so that a failure can be replayed
 * (`SOAK_SEED=<seed> npm run soak`; the same SOAK_JOBS too). `npm test` runs only a short form on a fixed seed
 * (test/e2e/fault-and-race.test.ts). Prints the figures as one JSON object, then a readable summary; exits 1
 * if any job's status disagrees with the bytes at its printer.
 */
import { runFaultAndRace } from '../e2e/fault-and-race.ts'
import { summarize } from '../e2e/fault-and-race-verdict.ts'

const seed = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000)
const jobs = Number(process.env.SOAK_JOBS ?? 1200)
const scale = jobs / 1200
const count = (n: number) => Math.max(1, Math.round(n * scale))

console.error(`soak: ${jobs} jobs, seed ${seed} (replay with SOAK_SEED=${seed} SOAK_JOBS=${jobs})`)
const { figures, violations } = await runFaultAndRace({
  jobs,
  seed,
  faults: { hubKills: count(10), cloudKills: count(8), brokerCuts: count(8), apiCuts: count(12) },
  // Creates caught by a cloud kill wait out their key's lock (120 s); more submitters keep the rest flowing.
  concurrency: 8,
  timeLimitMs: Math.max(300_000, jobs * 1000),
  log: (line) => console.error(`soak: ${line}`),
})
console.log(JSON.stringify(figures))
console.log(summarize(figures))
for (const violation of violations.slice(0, 50)) console.log(`  ✗ ${violation}`)
if (violations.length > 50) console.log(`  … and ${violations.length - 50} more`)
process.exit(violations.length > 0 ? 1 : 0)

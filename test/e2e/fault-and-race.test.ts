import { describe, expect, it } from 'vitest'
import { runFaultAndRace } from './fault-and-race.ts'
import { type FaultAndRaceOptions, planRun } from './fault-and-race-plan.ts'
import { CANCEL_MODES, summarize } from './fault-and-race-verdict.ts'

/**
 * Issue 6, point 10, short form, on a fixed plan: seed 17 (chosen among seeds 1–40 for its plan: faults spread
 * from job 19 to 87, each cancel mode 7 to 10 times, 6 resent creates). Randomised plans and the full size
 * are `npm run soak` (a new seed each run, printed; `SOAK_SEED=<seed>` replays one).
 */
const SHORT: FaultAndRaceOptions = {
  jobs: 100,
  seed: 17,
  faults: { hubKills: 2, cloudKills: 1, brokerCuts: 1, apiCuts: 2 },
  timeLimitMs: 90_000,
}

/**
 * Jobs over two printers with idempotent retries and racing cancels while the hub and the cloud are killed
 * and both links are cut. No job is lost, none is printed twice, none reported cancelled (or failed other
 * than interrupted) reached the printer, and no retried key made a second job.
 */
describe(`fault and race, short form (seed ${SHORT.seed})`, () => {
  it('its plan has every kind of fault, every cancel mode and resent creates, spread over the run', () => {
    const plan = planRun(SHORT)
    expect(plan.faults.map((f) => f.kind).sort()).toEqual([
      'api-cut',
      'api-cut',
      'broker-cut',
      'cloud-kill',
      'hub-kill',
      'hub-kill',
    ])
    for (const mode of CANCEL_MODES)
      expect(plan.jobs.filter((j) => j.cancel === mode).length, mode).toBeGreaterThanOrEqual(5)
    expect(plan.jobs.filter((j) => j.resend).length).toBeGreaterThanOrEqual(3)
    expect(new Set(plan.jobs.map((j) => j.printer))).toEqual(new Set([0, 1]))
    const at = plan.faults.map((f) => f.atJob)
    expect(Math.min(...at)).toBeLessThan(SHORT.jobs / 4)
    expect(Math.max(...at)).toBeGreaterThan((SHORT.jobs * 3) / 4)
  })

  it('keeps what the API says in line with the paper', { timeout: 120_000 }, async () => {
    const { figures, violations } = await runFaultAndRace(SHORT)
    console.info(`${JSON.stringify(figures)}\n${summarize(figures)}`)
    expect(violations).toEqual([])
    expect(figures.jobs_accepted).toBe(SHORT.jobs)
    // The faults and the races really happened.
    expect([figures.hub_kills, figures.cloud_kills, figures.broker_link_cuts, figures.api_link_cuts]).toEqual(
      [2, 1, 1, 2],
    )
    expect(figures.cancels_sent).toBeGreaterThan(0)
    // Creates the cloud gave no answer to went to the hub's LAN API with the same key (docs/lan-printing.md).
    expect(figures.lan_creates).toBeGreaterThan(0)
    expect(figures.printed).toBeGreaterThan(0)
  })
})

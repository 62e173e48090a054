import { DEFAULT_TIMINGS } from '../../hub/agent.ts'

/** The hub's production timings (agent.ts defaults), not the e2e harness's shortened test timings. */
export const PRODUCTION_HUB_ENV = {
  HUB_HEALTH_INTERVAL_MS: String(DEFAULT_TIMINGS.healthIntervalMs),
  HUB_STATUS_TIMEOUT_MS: String(DEFAULT_TIMINGS.statusTimeoutMs),
  HUB_RECHECK_MS: String(DEFAULT_TIMINGS.recheckMs),
  HUB_PAPER_WAIT_TIMEOUT_MS: String(DEFAULT_TIMINGS.paperWaitTimeoutMs),
  HUB_UNREACHABLE_TIMEOUT_MS: String(DEFAULT_TIMINGS.unreachableTimeoutMs),
  HUB_RENDER_DEADLINE_MS: String(DEFAULT_TIMINGS.renderDeadlineMs),
  LOG_LEVEL: 'info',
}

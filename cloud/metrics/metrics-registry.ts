import { collectDefaultMetrics, Registry } from 'prom-client'

/** The prefix of the cloud's own metrics; the process and Node.js runtime ones keep their standard names. */
export const PREFIX = 'print_hub_'

/**
 * prom-client's gauges named as counters (Prometheus' naming rules keep `_total` for counters; promtool
 * refuses them). Each is the sum over `type` of the gauge of the same name without `_total`, which stays.
 */
const MISNAMED_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
]

/**
 * One cloud's metrics. The process and runtime metrics (`process_*`, `nodejs_*`: CPU, memory, handles,
 * `nodejs_eventloop_lag_seconds`) keep the names every Prometheus client library gives them, so that the
 * usual dashboards read them; the cloud's own carry PREFIX. A registry per cloud, not prom-client's global
 * one: tests run several clouds in one process.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  for (const name of MISNAMED_DEFAULT_METRICS) registry.removeSingleMetric(name)
  return registry
}

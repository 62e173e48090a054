import { Type } from 'typebox'

/** A port number from 0 to 65535, as text. */
const PORT_NUMBER = '(0|[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])'

/**
 * Where Prometheus scrapes the cloud (docs/operations.md, "Metrics"): a listener of its own, never the API's
 * port, so that the public port shows no internals and no credential has to be kept for the scraper.
 */
export const METRICS_SETTINGS = {
  metricsHost: Type.String({
    minLength: 1,
    env: 'METRICS_HOST',
    default: '127.0.0.1',
    description: 'address the metrics listener binds (a private one)',
  }),
  metricsPort: Type.String({
    pattern: `^$|^${PORT_NUMBER}$`,
    env: 'METRICS_PORT',
    default: '',
    description: 'port of GET /metrics (Prometheus, e.g. 9464); unset (default): no metrics listener',
  }),
}

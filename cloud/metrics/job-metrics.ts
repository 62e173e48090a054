import { Counter, Histogram, type Registry } from 'prom-client'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import type { PrintJobRepository } from '../storage/print-jobs.ts'
import { PREFIX } from './metrics-registry.ts'

const FINISHED: readonly PrintJobStatus[] = ['printed', 'failed', 'cancelled']

/**
 * Counts jobs as they are created and finished, at the repository every JobLifecycle goes through (its
 * `create` inserts each job, its `apply` is the one compare-and-set of every status change): a job finishes
 * once, on the node that applied its change, so the sums over every node are the fleet's figures.
 */
export function countedPrintJobs(jobs: PrintJobRepository, registry: Registry): PrintJobRepository {
  const created = new Counter({
    name: `${PREFIX}print_jobs_created_total`,
    help: 'Print jobs created (stored; a job refused because its queue was full is not counted).',
    registers: [registry],
  })
  const finished = new Counter({
    name: `${PREFIX}print_jobs_finished_total`,
    help: 'Print jobs that reached a final status, by outcome (printed, failed, cancelled) and failure reason.',
    labelNames: ['outcome', 'reason'] as const,
    registers: [registry],
  })
  // Series that exist from the start, so that a rate over them is 0 rather than absent until the first one.
  for (const outcome of ['printed', 'cancelled']) finished.inc({ outcome, reason: '' }, 0)
  const timeToPrinted = new Histogram({
    name: `${PREFIX}print_job_time_to_printed_seconds`,
    help: 'Time from a job being created to the cloud learning it was printed.',
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600, 4 * 3600, 24 * 3600],
    registers: [registry],
  })
  return {
    ...jobs,
    async create(accountId, job, creation) {
      const outcome = await jobs.create(accountId, job, creation)
      if (outcome === 'created' || outcome === 'offered') created.inc()
      return outcome
    },
    async apply(printJobId, rule, change, hubId) {
      const applied = await jobs.apply(printJobId, rule, change, hubId)
      if (applied && rule.to !== undefined && FINISHED.includes(rule.to)) {
        finished.inc({
          outcome: applied.status,
          reason: applied.status === 'failed' ? (applied.failure_reason ?? '') : '',
        })
        if (applied.status === 'printed')
          timeToPrinted.observe(Math.max(0, Date.now() - Date.parse(applied.created_at)) / 1000)
      }
      return applied
    },
  }
}

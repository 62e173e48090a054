import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { isApiError } from '../../print-api/api-error.ts'
import type { PrintJobStatus } from '../../protocol/enums.ts'
import { cancelPrintJob, notCancellable } from '../print-jobs/cancel.ts'
import { JobLifecycle } from '../print-jobs/lifecycle.ts'
import type { PrintJobDetails } from '../storage/print-jobs.ts'
import { isUuid } from '../uuid.ts'
import { accountPrinters } from './account-printers.ts'
import type { ConsoleOptions } from './console-context.ts'
import { requireUser, userOf } from './guards.ts'
import { jobPageBody } from './job-page-view.ts'
import { isCancellable, jobState, shortId } from './job-view.ts'
import { jobsListBody } from './jobs-list-view.ts'
import { type JobsQuery, parseJobsQuery, STALE_PAGE } from './jobs-query.ts'
import type { PageParts } from './layout.ts'
import { type SectionPageParts, sendNotFound, sendSectionPage } from './section-page.ts'

/** Jobs per page of the list. */
const PAGE_SIZE = 25

/** The notices after a cancel (Post/Redirect/Get): fixed words for each outcome of the API's cancel. */
const CANCEL_NOTICES = {
  cancelled: { kind: 'ok', text: 'The job is cancelled: none of it reached the printer.' },
  requested: {
    kind: 'ok',
    text:
      "Cancel requested: the job's hub has not confirmed it yet. The job ends cancelled if the hub drops it, " +
      'or printed or failed if it had already started. This page follows it.',
  },
} as const

/** The notice of `?cancel=` after a cancel; a refusal names the API's error code and message. */
function cancelNotice(cancel: unknown, status: PrintJobStatus): PageParts['notice'] {
  if (cancel === 'cancelled' || cancel === 'requested') return CANCEL_NOTICES[cancel]
  // A refusal is only told of a job that cannot be cancelled (a hand-made link changes nothing).
  if (cancel !== 'refused' || isCancellable(status)) return undefined
  const refusal = notCancellable(status)
  return { kind: 'error', text: `${refusal.code}: ${refusal.message}` }
}

/**
 * The Jobs pages of the console (docs/console.md): the account's jobs, newest first, filtered by status and
 * printer; a job's facts and timeline, followed live while it is in flight; cancel as the API's cancel does.
 */
export const jobsPages: FastifyPluginAsync<ConsoleOptions> = async (app, { storage, jobEvents }) => {
  const lifecycle = new JobLifecycle(storage.printJobs, app.log)
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, parts: SectionPageParts) =>
    sendSectionPage(request, reply, 'jobs', status, parts)
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendNotFound(request, reply, 'jobs', { name: 'Job', listPath: '/console/jobs', listLabel: 'All jobs' })
  /** The account's job named by the route's :id; undefined for anything else (unknown, malformed, another's). */
  const jobOf = async (request: FastifyRequest): Promise<PrintJobDetails | undefined> => {
    const { id } = request.params as { id: string }
    if (!isUuid(id)) return undefined
    return storage.printJobs.findDetails(userOf(request).accountId, id)
  }

  app.get('/jobs', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const { accountId } = userOf(request)
    const printers = await accountPrinters(storage, accountId)
    const parsed = parseJobsQuery(request.query)
    const refused = (query: JobsQuery, problem: string) =>
      send(request, reply, 400, {
        title: 'Jobs',
        notice: { kind: 'error', text: problem },
        body: jobsListBody(printers, query, undefined),
      })
    if (!parsed.ok) return refused({}, parsed.problem)
    const { cursor, ...filter } = parsed.query
    const page = await storage.printJobs.list(accountId, PAGE_SIZE, cursor, filter)
    if (!page) return refused(filter, STALE_PAGE)
    return send(request, reply, 200, { title: 'Jobs', body: jobsListBody(printers, parsed.query, page) })
  })

  app.get('/jobs/:id', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const job = await jobOf(request)
    if (!job) return notFound(request, reply)
    const printer = await storage.printers.findById(userOf(request).accountId, job.printer_id)
    const notice = cancelNotice((request.query as { cancel?: unknown }).cancel, job.status)
    return send(request, reply, 200, {
      title: `Job ${shortId(job.print_job_id)}`,
      ...(notice && { notice }),
      body: jobPageBody(job, printer, reply.generateCsrf()),
    })
  })

  app.get('/jobs/:id/state', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const job = await jobOf(request)
    reply.header('cache-control', 'no-store')
    if (!job)
      return reply.code(404).send({ error_code: 'print_job_not_found', message: 'No such print job.' })
    return jobState(job)
  })

  app.post(
    '/jobs/:id/cancel',
    { schema: { hide: true }, preValidation: app.csrfProtection, preHandler: requireUser },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      if (!isUuid(id)) return notFound(request, reply)
      try {
        const { outcome } = await cancelPrintJob(
          { jobs: storage.printJobs, lifecycle, jobEvents },
          userOf(request).accountId,
          id,
          request.log,
        )
        return reply.redirect(`/console/jobs/${id}?cancel=${outcome}`, 303)
      } catch (error) {
        if (isApiError(error) && error.code === 'print_job_not_found') return notFound(request, reply)
        if (isApiError(error) && error.code === 'print_job_not_cancellable')
          return reply.redirect(`/console/jobs/${id}?cancel=refused`, 303)
        throw error
      }
    },
  )
}

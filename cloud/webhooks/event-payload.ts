import type { Agent } from '../../protocol/agent.ts'
import type { PrintJob } from '../../protocol/print-job.ts'
import type { Printer } from '../../protocol/printer.ts'
import type { WebhookEvent } from '../../protocol/webhooks.ts'
import type { Storage } from '../storage/storage.ts'
import { JOB_SNAPSHOT_FIELDS } from '../storage/webhook-triggers.ts'
import type { ClaimedDelivery } from '../storage/webhooks.ts'

/** The subjects of events, each as the API shows it to the account; undefined when gone or not the account's. */
export interface EventSubjects {
  printJob(accountId: string, printJobId: string): Promise<PrintJob | undefined>
  printer(accountId: string, printerId: string): Promise<Printer | undefined>
  agent(accountId: string, agentId: string): Promise<Agent | undefined>
}

export function storedEventSubjects(
  storage: Pick<Storage, 'printJobs' | 'printers' | 'agents'>,
): EventSubjects {
  return {
    printJob: (accountId, printJobId) => storage.printJobs.findById(accountId, printJobId),
    printer: (accountId, printerId) => storage.printers.findById(accountId, printerId),
    async agent(accountId, agentId) {
      const found = await storage.agents.findById(agentId)
      if (found?.account_id !== accountId) return undefined
      const { account_id: _, ...agent } = found
      return agent
    },
  }
}

/**
 * What each kind of subject takes from the event's snapshot (the columns the change wrote, as they were then),
 * over the subject as it is now: a `print_job.printing` delivered after the job was printed still says
 * `printing`. `idField` names the subject's id in its API form, for a subject that is gone.
 */
const SUBJECT_KINDS = {
  print_job: {
    idField: 'print_job_id',
    snapshotFields: JOB_SNAPSHOT_FIELDS,
    find: (subjects: EventSubjects, accountId: string, id: string) => subjects.printJob(accountId, id),
  },
  printer: {
    idField: 'printer_id',
    snapshotFields: ['online', 'health'],
    find: (subjects: EventSubjects, accountId: string, id: string) => subjects.printer(accountId, id),
  },
  agent: {
    idField: 'agent_id',
    snapshotFields: ['online', 'last_seen_at', 'version'],
    find: (subjects: EventSubjects, accountId: string, id: string) => subjects.agent(accountId, id),
  },
} as const

/**
 * The body of an event's deliveries (protocol/webhooks.ts, WebhookEvent). `data` is the subject as the API
 * returns it with the snapshot's fields over it. When the subject is gone (a printer removed, say), `data` is
 * only its id and the snapshot's fields. `webhook.test` (and any type this version does not know) has `{}`.
 */
export async function renderEventBody(delivery: ClaimedDelivery, subjects: EventSubjects): Promise<string> {
  const { event, accountId } = delivery
  const kind = SUBJECT_KINDS[event.type.split('.')[0] as keyof typeof SUBJECT_KINDS]
  let data: Record<string, unknown> = {}
  if (kind) {
    const snapshot = snapshotFields(event.snapshot, kind.snapshotFields)
    const current = await kind.find(subjects, accountId, event.subjectId)
    data = { ...(current ?? { [kind.idField]: event.subjectId }), ...snapshot }
  }
  const body = {
    id: event.eventId,
    type: event.type,
    timestamp: event.occurredAt,
    account_id: accountId,
    data,
  } as WebhookEvent
  return JSON.stringify(body)
}

function snapshotFields(text: string, fields: readonly string[]): Record<string, unknown> {
  const snapshot = JSON.parse(text) as Record<string, unknown>
  const picked: Record<string, unknown> = {}
  for (const field of fields) {
    if (!(field in snapshot)) continue
    picked[field] = normalised(field, snapshot[field])
  }
  return picked
}

/** SQLite's JSON functions write booleans as 0/1, and a JSON column copied as is stays a string. */
function normalised(field: string, value: unknown): unknown {
  if (field === 'online' && typeof value === 'number') return value === 1
  if (field === 'health' && typeof value === 'string') return JSON.parse(value)
  return value
}

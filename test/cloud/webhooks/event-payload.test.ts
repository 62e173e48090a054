import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import type { ClaimedDelivery } from '../../../cloud/storage/webhooks.ts'
import { type EventSubjects, renderEventBody } from '../../../cloud/webhooks/event-payload.ts'
import type { Agent } from '../../../protocol/agent.ts'
import { PRINT_OPTION_DEFAULTS, PrintJob } from '../../../protocol/print-job.ts'
import { Printer } from '../../../protocol/printer.ts'
import { WebhookEvent } from '../../../protocol/webhooks.ts'
import { RECEIPT_PRINTER } from '../test-cloud.ts'

const ACCOUNT = '5d0e8c7a-4c1b-4b8e-9f1a-0a1b2c3d4e5f'
const OTHER_ACCOUNT = '6e1f9d8b-5d2c-4c9f-8a2b-1b2c3d4e5f60'
const EVENT_ID = '7f2a0e9c-6e3d-4da0-9b3c-2c3d4e5f6071'
const JOB_ID = '8a3b1f0d-7f4e-4eb1-8c4d-3d4e5f607182'
const PRINTER_ID = '9b4c2a1e-8a5f-4fc2-9d5e-4e5f60718293'
const AGENT_ID = 'ac5d3b2f-9b6a-40d3-8e6f-5f60718293a4'
const DOCUMENT_ID = 'bd6e4c3a-ac7b-41e4-9f7a-60718293a4b5'

const printedJob: PrintJob = {
  print_job_id: JOB_ID,
  document_id: DOCUMENT_ID,
  document_mime_type: 'application/vnd.escpos',
  document_format: 'raw',
  document_raw_language: 'escpos',
  printer_id: PRINTER_ID,
  status: 'printed',
  ...PRINT_OPTION_DEFAULTS,
  created_at: '2026-11-28T12:00:00.000Z',
  reserved_at: '2026-11-28T12:00:00.100Z',
  started_at: '2026-11-28T12:00:00.200Z',
  completed_at: '2026-11-28T12:00:01.000Z',
  failure_reason: null,
  failure_detail: null,
  waiting_reason: null,
  origin: 'cloud',
  duplicate_of: null,
}

const printer: Printer = {
  printer_id: PRINTER_ID,
  agent_id: AGENT_ID,
  name: 'Receipts',
  languages: ['escpos'],
  capabilities: RECEIPT_PRINTER,
  online: true,
  health: { state: 'ready', reasons: [], checked_at: '2026-11-28T11:59:00.000Z' },
  last_seen_at: '2026-11-28T11:59:00.000Z',
  created_at: '2026-11-01T00:00:00.000Z',
}

const agent: Agent = {
  agent_id: AGENT_ID,
  name: 'Front desk hub',
  online: true,
  last_seen_at: '2026-11-28T12:00:00.000Z',
  version: '1.2.0',
  created_at: '2026-11-01T00:00:00.000Z',
  lan_api: { enabled: false, endpoint: null },
}

/** The subjects of ACCOUNT only, as the repositories answer them. */
const subjects: EventSubjects = {
  printJob: async (accountId, id) => (accountId === ACCOUNT && id === JOB_ID ? printedJob : undefined),
  printer: async (accountId, id) => (accountId === ACCOUNT && id === PRINTER_ID ? printer : undefined),
  agent: async (accountId, id) => (accountId === ACCOUNT && id === AGENT_ID ? agent : undefined),
}

const delivery = (
  type: string,
  subjectId: string,
  snapshot: object,
  accountId = ACCOUNT,
): ClaimedDelivery => ({
  deliveryId: 'ce7f5d4b-bd8c-42f5-8a8b-718293a4b5c6',
  accountId,
  endpointId: 'df806e5c-ce9d-4306-9b9c-8293a4b5c6d7',
  url: 'https://hooks.example.com/print',
  sealedSecrets: [],
  attempts: 0,
  claimedUntilMs: 0,
  endpointFailing: false,
  createdAtMs: 0,
  event: {
    eventId: EVENT_ID,
    type,
    subjectId,
    occurredAt: '2026-11-28T12:00:00.200Z',
    snapshot: JSON.stringify(snapshot),
    payload: null,
  },
})

const render = async (d: ClaimedDelivery) => {
  const text = await renderEventBody(d, subjects)
  const body = JSON.parse(text) as WebhookEvent
  expect(Value.Errors(WebhookEvent, body)).toEqual([])
  return body
}

describe('renderEventBody', () => {
  it('sends a job as the API returns it, with the status and times it had at the change', async () => {
    const snapshot = {
      status: 'printing',
      reserved_at: '2026-11-28T12:00:00.100Z',
      started_at: '2026-11-28T12:00:00.200Z',
      completed_at: null,
      failure_reason: null,
      failure_detail: null,
      waiting_reason: null,
      origin: 'cloud',
      duplicate_of: null,
    }
    const body = await render(delivery('print_job.printing', JOB_ID, snapshot))
    expect(Object.keys(body)).toEqual(['id', 'type', 'timestamp', 'account_id', 'data'])
    expect(body).toEqual({
      id: EVENT_ID,
      type: 'print_job.printing',
      timestamp: '2026-11-28T12:00:00.200Z',
      account_id: ACCOUNT,
      data: { ...printedJob, status: 'printing', completed_at: null },
    })
    expect(Value.Errors(PrintJob, body.data)).toEqual([])
  })

  it('takes only the changing columns from the snapshot', async () => {
    const snapshot = { status: 'printed', printer_id: 'not-this', document_id: 'nor-this' }
    const body = await render(delivery('print_job.printed', JOB_ID, snapshot))
    expect(body.data).toEqual(printedJob)
  })

  it('sends a printer as the printer list shows it, online and health as at the change', async () => {
    const health = { state: 'paper_out', reasons: ['paper end'], checked_at: '2026-11-28T12:00:00.000Z' }
    const body = await render(delivery('printer.health_changed', PRINTER_ID, { online: true, health }))
    expect(body.data).toEqual({ ...printer, health })
    expect(Value.Errors(Printer, body.data)).toEqual([])
  })

  it('reads SQLite’s 0/1 booleans and a health copied as JSON text', async () => {
    const body = await render(delivery('printer.offline', PRINTER_ID, { online: 0, health: 'null' }))
    expect(body.data).toEqual({ ...printer, online: false, health: null })
  })

  it('sends a hub as the agent list shows it', async () => {
    const snapshot = { online: false, last_seen_at: '2026-11-28T12:00:05.000Z', version: '1.2.0' }
    const body = await render(delivery('agent.offline', AGENT_ID, snapshot))
    expect(body.data).toEqual({ ...agent, online: false, last_seen_at: '2026-11-28T12:00:05.000Z' })
  })

  it('sends the id and the snapshot when the subject is gone, or is not the account’s', async () => {
    const gone = await render(
      delivery('printer.offline', '00000000-0000-4000-8000-000000000001', { online: false, health: null }),
    )
    expect(gone.data).toEqual({
      printer_id: '00000000-0000-4000-8000-000000000001',
      online: false,
      health: null,
    })
    const foreign = await renderEventBody(
      delivery('print_job.failed', JOB_ID, { status: 'failed', failure_reason: 'expired' }, OTHER_ACCOUNT),
      subjects,
    )
    expect(JSON.parse(foreign).data).toEqual({
      print_job_id: JOB_ID,
      status: 'failed',
      failure_reason: 'expired',
    })
  })

  it('sends {} for the test event', async () => {
    const body = await render(delivery('webhook.test', 'df806e5c-ce9d-4306-9b9c-8293a4b5c6d7', {}))
    expect(body).toMatchObject({ type: 'webhook.test', data: {} })
  })
})

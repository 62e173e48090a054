import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import Fastify from 'fastify'
import mqtt from 'mqtt'
import pg from 'pg'
import { SHARE_GROUP } from '../../cloud/broker/mosquitto-config.ts'
import { batched } from '../../cloud/storage/batched.ts'
import { hubTopic, PROTOCOL_VERSION, TOPIC_PREFIX } from '../../protocol/hub-messages.ts'
import { printerIdFor } from '../../protocol/printer-id.ts'

/**
 * The floor of a job's work (multi-node.ts, setup `floor`): a process that does for each job only what the
 * issue's anchor counts, "one create, a few row writes, three MQTT messages", with the cluster's PostgreSQL
 * and Mosquitto and before the same simulated hubs, in place of a cloud node:
 *   - POST /api/v1/print-jobs: the JSON body parsed, the printer's hub looked up in memory, the job's row
 *     inserted (the rows asked together in one statement, with the cloud's own batching: batched.ts), the
 *     offer published at QoS 1 on the hub's `job-offer` topic, and the job answered 201;
 *   - each `job-ack` and `job-status` from a hub (the cloud's shared subscription): the job's row updated (the
 *     rows asked together in one statement per status).
 * What the cloud does besides is left out on purpose: the access token and its scopes, the rate limits
 * (Redis), the account's printer, document and queue limit read from the database, the idempotency key, the
 * job's events and webhooks, its expiry, the log. The routes the benchmark calls first (`/oauth/token`,
 * `/api/v1/documents`) answer without doing anything.
 *
 * Settings: PORT, HOST, DATABASE_URL, MQTT_URL, MQTT_ADMIN_PASSWORD_FILE, MQTT_CLIENT_ID as for the cloud;
 * FLOOR_AGENTS_FILE, the hubs' agent ids (a JSON array), each with the bench printer FLOOR_PRINTER_KEY.
 */
const env = process.env
const agentOf = new Map<string, string>()
for (const agentId of JSON.parse(readFileSync(env.FLOOR_AGENTS_FILE!, 'utf8')) as string[])
  agentOf.set(printerIdFor(agentId, env.FLOOR_PRINTER_KEY!), agentId)

const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 })

/** Rows per statement at most; statements of a kind at once, as many as the pool has connections. */
const BATCH = { maxBatch: 128, maxInFlight: 4 }
const done = <T>(items: readonly T[]) => items.map(() => undefined)

interface JobRow {
  id: string
  printerId: string
  documentId: string
  createdAt: string
}
// Named: each connection prepares a statement once, as the cloud's are (cloud/storage/postgres-prepared.ts).
const insertJob = batched<JobRow, undefined>(async (rows) => {
  await pool.query({
    name: 'floor-insert',
    text: `INSERT INTO floor_jobs (id, printer_id, document_id, status, created_at)
     SELECT id, printer_id, document_id, 'pending', created_at
     FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[]) AS t (id, printer_id, document_id, created_at)`,
    values: [
      rows.map((r) => r.id),
      rows.map((r) => r.printerId),
      rows.map((r) => r.documentId),
      rows.map((r) => r.createdAt),
    ],
  })
  return done(rows)
}, BATCH)
/** A status and those it may follow: the hubs' reports of a job reach the nodes in any order. */
const LATER_THAN: Record<string, string[]> = { reserved: ['pending'], printed: ['pending', 'reserved'] }
const updates = new Map<string, (id: string) => Promise<undefined>>()
function updateJob(id: string, status: string): Promise<undefined> {
  let update = updates.get(status)
  if (!update) {
    const earlier = LATER_THAN[status] ?? []
    update = batched<string, undefined>(async (ids) => {
      await pool.query({
        name: `floor-update-${status}`,
        text: 'UPDATE floor_jobs SET status = $1, updated_at = now() WHERE id = ANY($2::uuid[]) AND status = ANY($3::text[])',
        values: [status, ids, earlier],
      })
      return done(ids)
    }, BATCH)
    updates.set(status, update)
  }
  return update(id)
}

const broker = mqtt.connect(env.MQTT_URL!, {
  protocolVersion: 5,
  clientId: env.MQTT_CLIENT_ID,
  username: 'print-hub-cloud',
  password: readFileSync(env.MQTT_ADMIN_PASSWORD_FILE!, 'utf8').trim(),
  clean: true,
  properties: { sessionExpiryInterval: 0 },
  reconnectPeriod: 1000,
})
broker.on('connect', () => (broker.stream as Socket).setNoDelay?.(true))
broker.on('message', (topic, payload) => {
  const message = JSON.parse(payload.toString()) as { print_job_id: string; status?: string }
  const status = topic.endsWith('/job-ack') ? 'reserved' : message.status
  if (status) updateJob(message.print_job_id, status).catch((error: unknown) => console.error(error))
})

const app = Fastify()
app.addContentTypeParser(
  ['multipart/form-data', 'application/x-www-form-urlencoded'],
  (_request, payload, done) => {
    payload.resume()
    payload.on('end', () => done(null))
  },
)
app.post('/oauth/token', async () => ({ access_token: 'floor', token_type: 'Bearer', expires_in: 3600 }))
app.post('/api/v1/documents', async (_request, reply) => reply.code(201).send({ document_id: randomUUID() }))
app.post<{ Body: { printer_id: string; document_id: string } }>(
  '/api/v1/print-jobs',
  async (request, reply) => {
    const { printer_id: printerId, document_id: documentId } = request.body
    const agentId = agentOf.get(printerId)
    if (!agentId) return reply.code(404).send({ error: { code: 'not_found', message: 'no such printer' } })
    const job = { id: randomUUID(), printerId, documentId, createdAt: new Date().toISOString() }
    await insertJob(job)
    const offer = {
      v: PROTOCOL_VERSION,
      print_job_id: job.id,
      printer_id: printerId,
      printer_key: env.FLOOR_PRINTER_KEY,
      document: {
        document_id: documentId,
        url: `http://127.0.0.1:${env.PORT}/agent-api/v1/documents/${documentId}/content`,
        sha256: '0'.repeat(64),
        size_bytes: 17,
        format: 'raw',
        raw_language: 'escpos',
      },
      options: { copies: 1 },
      created_at: job.createdAt,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    }
    broker.publish(hubTopic(agentId, 'job-offer'), JSON.stringify(offer), { qos: 1 })
    return reply.code(201).send({
      id: job.id,
      status: 'pending',
      printer_id: printerId,
      document_id: documentId,
      created_at: job.createdAt,
    })
  },
)

await new Promise<void>((resolve) => broker.once('connect', () => resolve()))
await broker.subscribeAsync(
  ['job-ack', 'job-status'].map((topic) => `$share/${SHARE_GROUP}/${TOPIC_PREFIX}/+/${topic}`),
  { qos: 1 },
)
await app.listen({ port: Number(env.PORT), host: env.HOST })
// The line startCloudProcess waits for.
console.log(JSON.stringify({ level: 30, msg: 'cloud ready' }))

process.once('SIGTERM', () => {
  Promise.all([app.close(), broker.endAsync(), pool.end()]).then(
    () => process.exit(0),
    () => process.exit(1),
  )
})

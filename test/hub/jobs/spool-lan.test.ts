import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type LanJobFacts, Spool } from '../../../hub/jobs/spool.ts'
import type { JobIdempotency, JobOffer } from '../../../protocol/hub-messages.ts'
import { PRINT_OPTION_DEFAULTS } from '../../../protocol/print-job.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { offer, SPOOL_PRINTER } from './job-offers.ts'

const KEY: JobIdempotency = {
  endpoint: '/api/v1/print-jobs/from-base64',
  key: 'till-7-order-1042',
  fingerprint: 'f'.repeat(64),
}
const FACTS: LanJobFacts = {
  client_id: 'client-till-7',
  mime_type: 'application/vnd.escpos',
  filename: null,
  options: { ...PRINT_OPTION_DEFAULTS, copies: 2 },
}
const AT = new Date('2026-11-28T12:00:00.000Z')

/** Offer `n` with an Idempotency-Key (KEY unless another is given). */
const keyed = (n: number, key: JobIdempotency = KEY): JobOffer => ({ ...offer(n), idempotency: key })

describe('the spool keys printing by Idempotency-Key across the cloud and the LAN (real SQLite file)', () => {
  let dir: ReturnType<typeof tempDir>
  let file: string
  let spool: Spool
  beforeEach(() => {
    dir = tempDir('spool-lan-')
    file = path.join(dir.path, 'spool.sqlite')
    spool = new Spool(file)
  })
  afterEach(() => {
    spool.close()
    dir.remove()
  })

  const payloads = () => spool.outbox().map((m) => ({ topic: m.topic, ...m.payload }))

  it('takes a LAN job queued and tells the cloud of it whole, once', () => {
    const taken = spool.acceptLan(keyed(1), FACTS, AT)
    expect(taken).toMatchObject({ outcome: 'created', job: { state: 'queued', origin: 'lan' } })
    expect(spool.next(SPOOL_PRINTER)?.print_job_id).toBe(offer(1).print_job_id)
    const { document } = offer(1)
    expect(payloads()).toStrictEqual([
      {
        topic: 'lan-job',
        v: 1,
        print_job_id: offer(1).print_job_id,
        printer_id: offer(1).printer_id,
        document: {
          document_id: document.document_id,
          sha256: document.sha256,
          size_bytes: document.size_bytes,
          format: 'raw',
          raw_language: 'escpos',
          mime_type: 'application/vnd.escpos',
          filename: null,
        },
        options: FACTS.options,
        created_at: offer(1).created_at,
        client_id: 'client-till-7',
        idempotency: KEY,
        status: 'reserved',
        at: AT.toISOString(),
      },
    ])
  })

  it('answers the same request sent again on the LAN with its job, and another request with the key a conflict', () => {
    spool.acceptLan(keyed(1), FACTS, AT)
    const again = spool.acceptLan(keyed(2), FACTS, AT)
    expect(again.outcome).toBe('replayed')
    expect(again.job.print_job_id).toBe(offer(1).print_job_id)
    const other = spool.acceptLan(keyed(3, { ...KEY, fingerprint: 'e'.repeat(64) }), FACTS, AT)
    expect(other.outcome).toBe('conflict')
    expect(spool.find(offer(2).print_job_id)).toBeUndefined()
    expect(spool.find(offer(3).print_job_id)).toBeUndefined()
    expect(spool.outbox()).toHaveLength(1)
  })

  it('answers a LAN request with the job the cloud offered under the same key, and prints nothing more', () => {
    spool.accept(keyed(1))
    const lan = spool.acceptLan(keyed(2), FACTS, AT)
    expect(lan).toMatchObject({ outcome: 'replayed', job: { origin: 'cloud' } })
    expect(lan.job.print_job_id).toBe(offer(1).print_job_id)
    expect(spool.printerKeysWithWork()).toEqual([SPOOL_PRINTER])
    expect(spool.next(SPOOL_PRINTER)?.print_job_id).toBe(offer(1).print_job_id)
    expect(payloads().map((p) => p.topic)).toEqual(['job-ack'])
  })

  it('drops a cloud offer whose request was taken on the LAN, naming the LAN job, however often it is offered', () => {
    spool.acceptLan(keyed(1), FACTS, AT)
    spool.startPrinting(offer(1).print_job_id, AT)
    spool.accept(keyed(2))
    spool.accept(keyed(2))
    expect(spool.find(offer(2).print_job_id)?.state).toBe('cancelled')
    expect(spool.next(SPOOL_PRINTER)).toBeUndefined()
    const dropped = payloads().filter((p) => p.topic === 'job-status')
    expect(dropped).toHaveLength(2)
    for (const report of dropped)
      expect(report).toMatchObject({
        print_job_id: offer(2).print_job_id,
        status: 'cancelled',
        duplicate_of: offer(1).print_job_id,
      })
  })

  it('prints a cloud offer whose key a LAN job took for another request: the cloud answered its client', () => {
    spool.acceptLan(keyed(1), FACTS, AT)
    spool.accept(keyed(2, { ...KEY, fingerprint: 'e'.repeat(64) }))
    expect(spool.find(offer(2).print_job_id)?.state).toBe('queued')
  })

  it('tells the cloud each change of a LAN job as the whole job: printing, printed, failed, dropped', () => {
    for (const n of [1, 2, 3]) spool.acceptLan(keyed(n, { ...KEY, key: `k${n}` }), FACTS, AT)
    const [one, two, three] = [1, 2, 3].map((n) => offer(n).print_job_id) as [string, string, string]
    spool.startPrinting(one, AT)
    spool.finish(one, AT)
    spool.fail(two, 'queued', 'printer_paper_out', 'no paper', AT)
    expect(spool.drop(three, 'cancelled', AT)).toBe('cancelled')
    const changes = payloads()
      .slice(3)
      .map((p) => ({
        id: p.print_job_id,
        topic: p.topic,
        status: 'status' in p && p.status,
        reason: 'failure_reason' in p ? p.failure_reason : undefined,
        detail: 'detail' in p ? p.detail : undefined,
      }))
    expect(changes).toStrictEqual([
      { id: one, topic: 'lan-job', status: 'printing', reason: undefined, detail: undefined },
      { id: one, topic: 'lan-job', status: 'printed', reason: undefined, detail: undefined },
      { id: two, topic: 'lan-job', status: 'failed', reason: 'printer_paper_out', detail: 'no paper' },
      { id: three, topic: 'lan-job', status: 'cancelled', reason: undefined, detail: undefined },
    ])
  })

  it('fails a LAN job found printing after a crash with `interrupted`, and tells the cloud', () => {
    spool.acceptLan(keyed(1), FACTS, AT)
    spool.startPrinting(offer(1).print_job_id, AT)
    spool.close()
    spool = new Spool(file)
    expect(spool.recoverInterrupted(AT)).toEqual([offer(1).print_job_id])
    expect(payloads().at(-1)).toMatchObject({
      topic: 'lan-job',
      status: 'failed',
      failure_reason: 'interrupted',
    })
  })

  it('keeps the keys across a restart of the hub', () => {
    spool.acceptLan(keyed(1), FACTS, AT)
    spool.close()
    spool = new Spool(file)
    expect(spool.acceptLan(keyed(2), FACTS, AT).outcome).toBe('replayed')
    spool.accept(keyed(3))
    expect(spool.find(offer(3).print_job_id)?.state).toBe('cancelled')
  })
})

import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Spool } from '../../../hub/jobs/spool.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { offer } from './job-offers.ts'

describe('the hub spool (real SQLite file)', () => {
  let dir: ReturnType<typeof tempDir>
  let file: string
  let spool: Spool
  beforeEach(() => {
    dir = tempDir('spool-')
    file = path.join(dir.path, 'spool.sqlite')
    spool = new Spool(file)
  })
  afterEach(() => {
    spool.close()
    dir.remove()
  })

  const topics = () =>
    spool.outbox().map((m) => `${m.topic}:${'status' in m.payload ? m.payload.status : 'ack'}`)

  it('keeps a job once however often it is offered, and acknowledges every offer', () => {
    expect(spool.accept(offer(1))).toBe(true)
    expect(spool.accept(offer(1))).toBe(false)
    expect(topics()).toEqual(['job-ack:ack', 'job-ack:ack'])
    expect(spool.next('socket://127.0.0.1:9100')?.print_job_id).toBe(offer(1).print_job_id)
  })

  it('hands out a printer’s jobs in creation order, whatever order they arrived in', () => {
    spool.accept(offer(3))
    spool.accept(offer(1))
    spool.accept(offer(2, 'other'))
    expect(spool.next('socket://127.0.0.1:9100')?.print_job_id).toBe(offer(1).print_job_id)
    expect(spool.next('other')?.print_job_id).toBe(offer(2).print_job_id)
    expect(spool.printerKeysWithWork().sort()).toEqual(['other', 'socket://127.0.0.1:9100'])
  })

  it('moves queued → printing → printed once, queuing each report', () => {
    const id = offer(1).print_job_id
    spool.accept(offer(1))
    expect(spool.startPrinting(id)).toBe(true)
    expect(spool.startPrinting(id)).toBe(false)
    expect(spool.finish(id)).toBe(true)
    expect(spool.finish(id)).toBe(false)
    expect(topics()).toEqual(['job-ack:ack', 'job-status:printing', 'job-status:printed'])
  })

  it('fails a job found printing after a crash with `interrupted`, and never hands it out again', () => {
    const id = offer(1).print_job_id
    spool.accept(offer(1))
    spool.startPrinting(id)
    spool.close()
    spool = new Spool(file)
    expect(spool.recoverInterrupted()).toEqual([id])
    expect(spool.find(id)?.state).toBe('failed')
    expect(spool.next('socket://127.0.0.1:9100')).toBeUndefined()
    const last = spool.outbox().at(-1)?.payload
    expect(last).toMatchObject({ status: 'failed', failure_reason: 'interrupted' })
    // Offered again by a cloud that missed the report: the failure is reported again, nothing reprints.
    expect(spool.accept(offer(1))).toBe(false)
    expect(spool.outbox().at(-1)?.payload).toMatchObject({ status: 'failed', failure_reason: 'interrupted' })
    expect(spool.next('socket://127.0.0.1:9100')).toBeUndefined()
  })

  it('drops only a job that has not started, and answers each drop request with the job’s status', () => {
    spool.accept(offer(1))
    spool.accept(offer(2))
    spool.startPrinting(offer(2).print_job_id)
    const before = spool.outbox().length
    expect(spool.drop(offer(1).print_job_id, 'cancelled')).toBe('cancelled')
    expect(spool.drop(offer(2).print_job_id, 'cancelled')).toBe('printing')
    expect(spool.find(offer(1).print_job_id)?.state).toBe('cancelled')
    expect(spool.find(offer(2).print_job_id)?.state).toBe('printing')
    expect(spool.next('socket://127.0.0.1:9100')).toBeUndefined()
    expect(
      spool
        .outbox()
        .slice(before)
        .map((m) => [m.topic, m.payload]),
    ).toEqual([
      ['job-status', expect.objectContaining({ print_job_id: offer(1).print_job_id, status: 'cancelled' })],
      ['job-status', expect.objectContaining({ print_job_id: offer(2).print_job_id, status: 'printing' })],
    ])
    // Asked again, it answers again (the first answer may have been lost).
    expect(spool.drop(offer(1).print_job_id, 'cancelled')).toBe('cancelled')
    expect(spool.outbox().at(-1)?.payload).toMatchObject({ status: 'cancelled' })
  })

  it('drops a queued job as expired when the cloud says it expired', () => {
    spool.accept(offer(1))
    expect(spool.drop(offer(1).print_job_id, 'expired')).toBe('failed')
    expect(spool.outbox().at(-1)?.payload).toMatchObject({ status: 'failed', failure_reason: 'expired' })
    expect(spool.next('socket://127.0.0.1:9100')).toBeUndefined()
  })

  it('never queues a job whose drop request arrived before its offer, across a restart', () => {
    expect(spool.drop(offer(1).print_job_id, 'cancelled')).toBe('unknown')
    expect(spool.outbox().at(-1)?.payload).toMatchObject({
      print_job_id: offer(1).print_job_id,
      status: 'cancelled',
    })
    spool.close()
    spool = new Spool(file)
    expect(spool.accept(offer(1))).toBe(true)
    expect(spool.find(offer(1).print_job_id)?.state).toBe('cancelled')
    expect(spool.next('socket://127.0.0.1:9100')).toBeUndefined()
    // No acknowledgement (the job is not spooled for printing); its status is told instead.
    expect(spool.outbox().at(-1)).toMatchObject({ topic: 'job-status', payload: { status: 'cancelled' } })
    expect(spool.drop(offer(2).print_job_id, 'expired')).toBe('unknown')
    spool.accept(offer(2))
    expect(spool.find(offer(2).print_job_id)?.state).toBe('failed')
    expect(spool.outbox().at(-1)?.payload).toMatchObject({ status: 'failed', failure_reason: 'expired' })
  })

  it('keeps the outbox until each message is delivered, across a restart', () => {
    spool.accept(offer(1))
    spool.accept(offer(2))
    const [first] = spool.outbox()
    spool.delivered(first!.seq)
    spool.close()
    spool = new Spool(file)
    expect(spool.outbox().map((m) => m.payload.print_job_id)).toEqual([offer(2).print_job_id])
  })

  it('tells its outbox listeners after each committed write that queued a report, and only then', () => {
    const seen: number[] = []
    const reader = new Spool(file)
    // What another connection sees when the listener runs: only what was committed.
    const stop = spool.onOutbox(() => seen.push(reader.outbox().length))
    try {
      const id = offer(1).print_job_id
      spool.accept(offer(1))
      expect(spool.finish(id)).toBe(false) // not printing: no report, no call
      expect(spool.waiting(offer(9).print_job_id, 'paper_out')).toBe(false)
      spool.startPrinting(id)
      spool.drop(id, 'cancelled') // answered with `printing`
      expect(seen).toEqual([1, 2, 3])
      stop()
      spool.finish(id)
      expect(seen).toEqual([1, 2, 3])
      expect(spool.outbox()).toHaveLength(4)
    } finally {
      reader.close()
    }
  })
})

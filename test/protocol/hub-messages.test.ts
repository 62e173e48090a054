import { describe, expect, it } from 'vitest'
import { decodeHubMessage } from '../../protocol/hub-message-decoder.ts'
import { parseHubTopic } from '../../protocol/hub-messages.ts'

const JOB = '6f1c2b7e-8d4a-4e6f-9a0b-1c2d3e4f5a6b'

describe('hub messages on the wire', () => {
  it('accepts a message of the protocol version that matches its schema', () => {
    const decoded = decodeHubMessage(
      'job-ack',
      JSON.stringify({ v: 1, print_job_id: JOB, at: '2026-11-22T00:00:00.000Z' }),
    )
    expect(decoded).toEqual({ ok: true, value: { v: 1, print_job_id: JOB, at: '2026-11-22T00:00:00.000Z' } })
  })

  it.each([
    ['not JSON', '{v:1', 'not JSON'],
    [
      'an unknown version',
      JSON.stringify({ v: 2, print_job_id: JOB, at: '2026-11-22T00:00:00.000Z' }),
      'unknown protocol version 2',
    ],
    [
      'no version',
      JSON.stringify({ print_job_id: JOB, at: '2026-11-22T00:00:00.000Z' }),
      'unknown protocol version undefined',
    ],
    [
      'a bad id',
      JSON.stringify({ v: 1, print_job_id: 'x', at: '2026-11-22T00:00:00.000Z' }),
      '/print_job_id',
    ],
  ])('refuses %s', (_what, payload, reason) => {
    const decoded = decodeHubMessage('job-ack', payload)
    expect(decoded.ok).toBe(false)
    expect(decoded.ok ? '' : decoded.reason).toContain(reason)
  })

  it('reads a payload of bytes as UTF-8', () => {
    const ack = { v: 1, print_job_id: JOB, at: '2026-11-22T00:00:00.000Z' }
    expect(decodeHubMessage('job-ack', Buffer.from(JSON.stringify(ack)))).toEqual({ ok: true, value: ack })
    const withMark = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(ack))])
    expect(decodeHubMessage('job-ack', withMark)).toEqual({ ok: false, reason: 'not JSON' })
  })

  it('refuses a message that is valid for another topic', () => {
    const ack = { v: 1, print_job_id: JOB, at: '2026-11-22T00:00:00.000Z' }
    expect(decodeHubMessage('command', JSON.stringify(ack)).ok).toBe(false)
  })

  it('refuses a status with a failure reason outside the catalogue', () => {
    const payload = {
      v: 1,
      print_job_id: JOB,
      status: 'failed',
      at: '2026-11-22T00:00:00.000Z',
      failure_reason: 'gremlins',
    }
    expect(decodeHubMessage('job-status', JSON.stringify(payload)).ok).toBe(false)
  })

  it.each([
    ['hubs/abc/state', { agentId: 'abc', topic: 'state' }],
    ['hubs/abc/job-offer', { agentId: 'abc', topic: 'job-offer' }],
    ['hubs/abc/unknown', null],
    ['hubs//state', null],
    ['hubs/abc/state/extra', null],
    ['other/abc/state', null],
  ])('parses the topic %s', (topic, expected) => {
    expect(parseHubTopic(topic)).toEqual(expected)
  })
})

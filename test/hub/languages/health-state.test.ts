import { describe, expect, it } from 'vitest'
import { REASON_STATES, type StatusReason, stateOf } from '../../../hub/languages/health-state.ts'
import { BLOCKING_HEALTH_STATES, HEALTH_STATES } from '../../../protocol/printer-health.ts'

describe('stateOf', () => {
  it('is ready with no reasons or only informational ones', () => {
    expect(stateOf([])).toBe('ready')
    expect(stateOf(['battery_low', 'clean_printhead', 'host_status_no_reply'])).toBe('ready')
  })

  it.each([
    [['paper_near_end', 'cover_open', 'paper_out'], 'cover_open'],
    [['head_open', 'paper_out'], 'cover_open'],
    [['paper_jam', 'paper_out'], 'paper_out'],
    [['cutter_error', 'paper_jam'], 'paper_jam'],
    [['cutter_error', 'head_over_temperature'], 'head_error'],
    [['ribbon_out', 'cutter_error'], 'cutter_error'],
    [['printer_offline', 'error_reported'], 'error'],
    [['paused', 'printer_offline'], 'offline'],
    [['paper_near_end', 'paused'], 'paused'],
    [['printing', 'paper_near_end'], 'paper_low'],
    [['printing'], 'busy'],
  ] as const)('%j → %s', (reasons, state) => {
    expect(stateOf(reasons as readonly StatusReason[])).toBe(state)
  })

  it('maps every reason to a protocol health state', () => {
    for (const state of Object.values(REASON_STATES)) {
      if (state !== null) expect(HEALTH_STATES).toContain(state)
    }
  })

  it('keeps paper_low printable and paper_out / cover_open blocking', () => {
    expect(BLOCKING_HEALTH_STATES).not.toContain('paper_low')
    expect(BLOCKING_HEALTH_STATES).toContain(stateOf(['paper_out']))
    expect(BLOCKING_HEALTH_STATES).toContain(stateOf(['head_open']))
  })
})

import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  formatRecord,
  parseRecord,
  readResult,
  readTrial,
  trialAtStart,
  writeResult,
  writeTrial,
} from '../../../hub/update/update-records.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

describe('update records (key=value files the launcher reads too)', () => {
  let dir: ReturnType<typeof tempDir>
  beforeEach(() => {
    dir = tempDir('update-records-')
  })
  afterEach(() => dir.remove())

  it('one line per field, newlines in a value flattened, parsed back', () => {
    const text = formatRecord({ version: '1.1.0', detail: 'two\nlines', skipped: undefined, starts: 0 })
    expect(text).toBe('version=1.1.0\ndetail=two lines\nstarts=0\n')
    expect(parseRecord(text)).toEqual({ version: '1.1.0', detail: 'two lines', starts: '0' })
    // A value may hold '=' itself.
    expect(parseRecord('detail=a=b\n')).toEqual({ detail: 'a=b' })
  })

  it('a trial written is read back; a malformed one reads as none', () => {
    const file = path.join(dir.path, 'update/trial')
    writeTrial(file, { version: '1.1.0', previous: '1.0.0', deadline: 1_700_000_000_000, starts: 0 })
    expect(readFileSync(file, 'utf8')).toBe(
      'version=1.1.0\nprevious=1.0.0\ndeadline=1700000000000\nstarts=0\n',
    )
    expect(readTrial(file)).toEqual({
      version: '1.1.0',
      previous: '1.0.0',
      deadline: 1_700_000_000_000,
      starts: 0,
    })
    writeFileSync(file, 'version=1.1.0\nprevious=../../etc\ndeadline=1\nstarts=1\n')
    expect(readTrial(file)).toBeUndefined()
    writeFileSync(file, 'version=1.1.0\nprevious=1.0.0\ndeadline=soon\n')
    expect(readTrial(file)).toBeUndefined()
    expect(readTrial(path.join(dir.path, 'none'))).toBeUndefined()
  })

  it('a result is a HubUpdate or nothing (the launcher writes rolled_back results in this form)', () => {
    const file = path.join(dir.path, 'update/result')
    const result = {
      version: '1.1.0',
      status: 'failed',
      failure: 'rolled_back',
      detail: 'it stopped before it connected to the cloud; rolled back to 1.0.0',
      at: '2026-11-24T12:00:00.000Z',
    } as const
    writeResult(file, result)
    expect(readResult(file)).toEqual(result)
    writeFileSync(file, 'version=1.1.0\nstatus=exploded\nat=2026-11-24T12:00:00.000Z\n')
    expect(readResult(file)).toBeUndefined()
  })
})

describe('a trial at start-up', () => {
  const trial = { version: '1.1.0', previous: '1.0.0', deadline: 10_000, starts: 1 }
  it('none without a trial', () => {
    expect(trialAtStart(undefined, '1.1.0', 0)).toEqual({ kind: 'none' })
  })
  it('this release on trial: the time left to connect, never negative', () => {
    expect(trialAtStart(trial, '1.1.0', 4_000)).toEqual({ kind: 'on_trial', trial, remainingMs: 6_000 })
    expect(trialAtStart(trial, '1.1.0', 12_000)).toEqual({ kind: 'on_trial', trial, remainingMs: 0 })
  })
  it('a trial of another release is not this one’s', () => {
    expect(trialAtStart(trial, '1.0.0', 0)).toEqual({ kind: 'other_release', trial })
  })
})

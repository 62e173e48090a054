import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Value } from 'typebox/value'
import { HubUpdate, RELEASE_VERSION_PATTERN } from '../../protocol/hub-messages.ts'

/**
 * The two records of a self-update, as `key=value` lines so that the launcher (a POSIX shell script) reads
 * and writes them too (docs/hub-updates.md):
 *
 * - the trial: the release just switched to, the one before it, until when it has to connect, and how often
 *   the launcher has started it (`starts`); a trial the launcher finds already started once was not
 *   confirmed, and it rolls back;
 * - the result: how the last update ended (HubUpdate), kept until the next one and reported in every state.
 */
export interface Trial {
  version: string
  previous: string
  /** Epoch milliseconds: the new release must have connected to the cloud by then. */
  deadline: number
  /** Set by the launcher before it starts the release: 0 before the first start, 1 after. */
  starts: number
  /** Why the release gave up (it writes this before it exits), for the launcher's report. */
  reason?: string
}

const VERSION = new RegExp(RELEASE_VERSION_PATTERN)

/** `key=value` lines; values are one line each (newlines become spaces). */
export function formatRecord(fields: Record<string, string | number | undefined>): string {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${String(value).replace(/[\r\n]+/g, ' ')}\n`)
    .join('')
}

export function parseRecord(text: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1)
  }
  return fields
}

/** Writes through a temporary file and a rename: a reader (or a power cut) sees the old record or the new. */
export function writeRecord(file: string, fields: Record<string, string | number | undefined>): void {
  mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, formatRecord(fields), { mode: 0o644 })
  renameSync(temporary, file)
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

export function readTrial(file: string): Trial | undefined {
  const text = readText(file)
  if (text === undefined) return undefined
  const f = parseRecord(text)
  const deadline = Number(f.deadline)
  const starts = Number(f.starts ?? '0')
  if (!VERSION.test(f.version ?? '') || !VERSION.test(f.previous ?? '') || !Number.isFinite(deadline))
    return undefined
  return {
    version: f.version!,
    previous: f.previous!,
    deadline,
    starts: Number.isInteger(starts) ? starts : 0,
    ...(f.reason !== undefined && { reason: f.reason }),
  }
}

export function writeTrial(file: string, trial: Trial): void {
  writeRecord(file, { ...trial })
}

export function removeRecord(file: string): void {
  rmSync(file, { force: true })
}

/** The last update's result; undefined when there is none or it is not a well-formed one. */
export function readResult(file: string): HubUpdate | undefined {
  const text = readText(file)
  if (text === undefined) return undefined
  const { version, status, failure, detail, at } = parseRecord(text)
  const update = {
    version,
    status,
    ...(failure && { failure }),
    ...(detail && { detail: detail.slice(0, 500) }),
    at,
  }
  return Value.Check(HubUpdate, update) ? update : undefined
}

export function writeResult(file: string, update: HubUpdate): void {
  writeRecord(file, { ...update })
}

/** What a starting release does about a trial (the launcher has already rolled back an unconfirmed one). */
export type TrialAtStart =
  | { kind: 'none' }
  /** This release is on trial: it must connect within `remainingMs`, or give up. */
  | { kind: 'on_trial'; trial: Trial; remainingMs: number }
  /** A trial of another release: this one was not started by the launcher; the trial is left alone. */
  | { kind: 'other_release'; trial: Trial }

export function trialAtStart(trial: Trial | undefined, running: string, now: number): TrialAtStart {
  if (!trial) return { kind: 'none' }
  if (trial.version !== running) return { kind: 'other_release', trial }
  return { kind: 'on_trial', trial, remainingMs: Math.max(0, trial.deadline - now) }
}

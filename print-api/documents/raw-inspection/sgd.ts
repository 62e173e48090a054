import { finding, type RawFinding } from './finding.ts'

// Zebra Set-Get-Do (SGD) commands, which Zebra printers accept inside a ZPL or CPCL stream. Source: Zebra
// "Programming Guide: ZPL II, ZBI 2, Set-Get-Do, Mirror, WML" (P1099958), chapter "SGD Command Overview":
//   ! U1 setvar "attribute" "value"   changes a setting (ip.addr, wlan.essid, device.friendly_name, ...);
//                                      most are kept in non-volatile memory at once
//   ! U1 do "attribute" "value"       runs an action (device.reset, file.delete, device.restore_defaults ...)
//   ! U1 getvar "attribute"           only reads, and passes
// and chapter "JSON Set-Get-Do": `{}{"attribute":"value"}` sets, `{}{"attribute":null}` reads.
// CPCL's utility session (Zebra "CPCL Programming Guide", P1073699, "! UTILITIES" / "! U") takes commands
// one per line until END or PRINT; a line there that starts with setvar or do is refused too.
// Every scan here is bounded and moves the caller past what it read, so inspection stays linear in size.

const MAX_LINE = 1024
const MAX_JSON = 65536

export interface SgdScan {
  /** The refused command, or null when the SGD command only reads. */
  finding: RawFinding | null
  /** The end of the SGD line or JSON object just read: all of it was checked. A ZPL scanner keeps reading
   * its bytes as ZPL (inside a format `{}{` or `! U1` may be mere field data) but need not look for SGD
   * there again; a CPCL scanner continues after it. */
  next: number
  /** A `! U` / `! UTILITIES` session (or a bare `! U1`) starts: check the following lines' first words. */
  opensSession: boolean
}

/** The end of the line starting at `from`, at most MAX_LINE bytes on. */
function lineEnd(bytes: Buffer, from: number): number {
  const limit = Math.min(bytes.length, from + MAX_LINE)
  for (let i = from; i < limit; i++) {
    if (bytes[i] === 0x0d || bytes[i] === 0x0a) return i
  }
  return limit
}

/** The SGD verb among the words of `text` outside quoted strings: `setvar "a.do" "x"` → setvar. */
function verb(text: string): 'setvar' | 'do' | null {
  for (const word of text
    .replace(/"[^"]*"?/g, ' ')
    .toLowerCase()
    .split(/\s+/)) {
    if (word === 'setvar' || word === 'do') return word
  }
  return null
}

function refused(word: 'setvar' | 'do', line: string, offset: number): RawFinding {
  return finding(word === 'setvar' ? 'sgd_setvar' : 'sgd_do', line.trim(), offset)
}

/** `! U1 ...`, `! U ...` or `! UTILITIES ...` at `offset`. */
function bangLine(bytes: Buffer, offset: number): SgdScan | null {
  const end = lineEnd(bytes, offset)
  const line = bytes.toString('latin1', offset, end)
  const head = /^![ \t]*(U1|UTILITIES|U)(?![A-Za-z0-9])/i.exec(line)
  if (!head) return null
  const rest = line.slice(head[0].length)
  const word = verb(rest)
  if (word) return { finding: refused(word, line, offset), next: end, opensSession: false }
  const single = head[1]?.toUpperCase() === 'U1' && rest.trim() !== ''
  return { finding: null, next: end, opensSession: !single }
}

/** The end (exclusive) of the JSON object at `from`, or -1 within MAX_JSON bytes. */
function objectEnd(bytes: Buffer, from: number): number {
  let depth = 0
  let inString = false
  const limit = Math.min(bytes.length, from + MAX_JSON)
  for (let i = from; i < limit; i++) {
    const c = bytes[i]
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b) depth++
    else if (c === 0x7d && --depth === 0) return i + 1
  }
  return -1
}

function isBlank(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a
}

/** JSON SGD `{}{...}` at `offset`: a set unless every value is null. Unparseable or unended JSON is refused. */
function jsonObject(bytes: Buffer, offset: number): SgdScan | null {
  let i = offset + 1
  while (isBlank(bytes[i])) i++
  if (bytes[i] !== 0x7d) return null
  i++
  while (isBlank(bytes[i])) i++
  if (bytes[i] !== 0x7b) return null
  const end = objectEnd(bytes, i)
  const shown = bytes.toString('latin1', offset, Math.min(bytes.length, offset + 60))
  if (end === -1)
    return { finding: finding('sgd_setvar', shown, offset), next: bytes.length, opensSession: false }
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.toString('utf8', i, end))
  } catch {
    return { finding: finding('sgd_setvar', shown, offset), next: end, opensSession: false }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { finding: finding('sgd_setvar', shown, offset), next: end, opensSession: false }
  }
  const set = Object.entries(parsed).find(([, value]) => value !== null)
  return {
    finding: set ? finding('sgd_setvar', `{}{"${set[0]}":...}`, offset) : null,
    next: end,
    opensSession: false,
  }
}

/** An SGD command starting at `offset` (which holds `!` or `{`), or null when the bytes there are not one. */
export function sgdAt(bytes: Buffer, offset: number): SgdScan | null {
  if (bytes[offset] === 0x21) return bangLine(bytes, offset)
  if (bytes[offset] === 0x7b) return jsonObject(bytes, offset)
  return null
}

/** A line inside a utility session, starting at `offset`: 'end' on END or PRINT, a finding on setvar/do. */
export function sgdSessionLine(bytes: Buffer, offset: number): RawFinding | 'end' | null {
  const word = /^[A-Za-z]+/.exec(bytes.toString('latin1', offset, Math.min(bytes.length, offset + 16)))?.[0]
  const upper = word?.toUpperCase()
  if (upper === 'END' || upper === 'PRINT') return 'end'
  if (upper !== 'SETVAR' && upper !== 'DO') return null
  const line = bytes.toString('latin1', offset, lineEnd(bytes, offset))
  return refused(upper === 'SETVAR' ? 'setvar' : 'do', line, offset)
}

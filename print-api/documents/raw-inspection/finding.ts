/**
 * A command that the RAW inspection refuses. `reason` is a stable snake_case code clients can branch on,
 * `command` a short printable rendering of what was found, `offset` the byte where that command starts.
 */
export interface RawFinding {
  reason: string
  command: string
  offset: number
}

/** The byte at `index`, or 0 past the end: a command cut short then reads as zeros and runs off the end. */
export function byteAt(bytes: Buffer, index: number): number {
  return bytes[index] ?? 0
}

/** A printable rendering of user bytes for `details.command`: ASCII only, at most 80 characters. */
export function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
  return clean.length > 80 ? `${clean.slice(0, 77)}...` : clean
}

export function finding(reason: string, command: string, offset: number): RawFinding {
  return { reason, command: printable(command), offset }
}

/**
 * A minimal ESC/POS decoder for tests: splits a byte stream into text runs and commands, knowing the length
 * of the commands receipts use (Epson "ESC/POS Command Reference"). Unknown ESC/GS/FS commands are taken as
 * two bytes, which is wrong for some, so assert on streams made of the commands listed here.
 */
export type EscposToken = { kind: 'text'; text: string } | { kind: 'command'; name: string; bytes: Buffer }

const ESC = 0x1b
const GS = 0x1d
const FS = 0x1c
const DLE = 0x10

/** Parameter bytes after `ESC x` / `GS x` for fixed-length commands, by the command character. */
const ESC_FIXED: Record<string, number> = {
  ...{ '@': 0, '!': 1, ' ': 1, $: 2, '-': 1, '2': 0, '3': 1, E: 1, G: 1, J: 1, K: 1, M: 1, R: 1 },
  ...{ L: 0, S: 0, T: 1, U: 1, V: 1, W: 8, '\\': 2, a: 1, c: 2, d: 1, e: 1, i: 0, m: 0, p: 3, r: 1, t: 1 },
  '{': 1,
}
const GS_FIXED: Record<string, number> = {
  ...{ '!': 1, $: 2, B: 1, H: 1, I: 1, L: 2, P: 2, W: 2, '\\': 2, a: 1, b: 1, f: 1, h: 1, r: 1, w: 1 },
}
const CONTROL_NAMES: Record<number, string> = { 9: 'HT', 10: 'LF', 12: 'FF', 13: 'CR' }

const u16 = (bytes: Buffer, at: number) => (bytes[at] ?? 0) + 256 * (bytes[at + 1] ?? 0)

/** Length of the command starting at `at` (its first byte is ESC, GS, FS or DLE). */
function commandLength(bytes: Buffer, at: number): number {
  const lead = bytes[at]
  const c = String.fromCharCode(bytes[at + 1] ?? 0)
  if (lead === DLE) return c === '\x14' ? 5 : 3 // DLE EOT n, DLE ENQ n; DLE DC4 fn m t
  if (lead === ESC) {
    if (c === '*') return 5 + u16(bytes, at + 3) * ((bytes[at + 2] ?? 0) < 2 ? 1 : 3) // ESC * m nL nH d1..dk
    return 2 + (ESC_FIXED[c] ?? 0)
  }
  if (lead === FS) return c === 'p' ? 4 : 2 // FS p n m: print NV bit image
  // GS
  if (c === 'V') return [0, 1, 48, 49].includes(bytes[at + 2] ?? 0) ? 3 : 4 // GS V m [n]: cut
  if (c === 'v') return 8 + u16(bytes, at + 4) * u16(bytes, at + 6) // GS v 0 m xL xH yL yH d1..dk
  if (c === '(') return 5 + u16(bytes, at + 3) // GS ( X pL pH ...
  if (c === '8') return at + 7 <= bytes.length ? 7 + bytes.readUInt32LE(at + 3) : bytes.length - at // GS 8 L p1..p4
  if (c === 'k') {
    const m = bytes[at + 2] ?? 0
    if (m >= 65) return 4 + (bytes[at + 3] ?? 0) // GS k m n d1..dn
    const nul = bytes.indexOf(0, at + 3) // GS k m d1..dk NUL
    return (nul < 0 ? bytes.length : nul + 1) - at
  }
  return 2 + (GS_FIXED[c] ?? 0)
}

function commandName(bytes: Buffer): string {
  const lead = { [ESC]: 'ESC', [GS]: 'GS', [FS]: 'FS', [DLE]: 'DLE' }[bytes[0]!]
  const c = bytes[1] ?? 0
  if (lead === 'DLE') return { 4: 'DLE EOT', 5: 'DLE ENQ', 20: 'DLE DC4' }[c] ?? 'DLE'
  const char = c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : `0x${c.toString(16)}`
  if (lead === 'GS' && (char === 'v' || char === '(' || char === '8'))
    return `GS ${char} ${String.fromCharCode(bytes[2] ?? 0)}`
  return `${lead} ${char}`
}

export function decodeEscpos(bytes: Buffer): EscposToken[] {
  const tokens: EscposToken[] = []
  let at = 0
  while (at < bytes.length) {
    const byte = bytes[at]!
    if (byte === ESC || byte === GS || byte === FS || byte === DLE) {
      const end = Math.min(bytes.length, at + commandLength(bytes, at))
      const command = bytes.subarray(at, end)
      tokens.push({ kind: 'command', name: commandName(command), bytes: Buffer.from(command) })
      at = end
    } else if (byte < 0x20) {
      const name = CONTROL_NAMES[byte] ?? `0x${byte.toString(16).padStart(2, '0')}`
      tokens.push({ kind: 'command', name, bytes: Buffer.from([byte]) })
      at++
    } else {
      let end = at
      while (end < bytes.length && bytes[end]! >= 0x20) end++
      tokens.push({ kind: 'text', text: bytes.toString('latin1', at, end) })
      at = end
    }
  }
  return tokens
}

/** The printed text: text runs, with LF as a newline. */
export function escposText(tokens: readonly EscposToken[]): string {
  return tokens.map((t) => (t.kind === 'text' ? t.text : t.name === 'LF' ? '\n' : '')).join('')
}

/** The names of the commands, in order (`ESC @`, `GS v 0`, `GS V`, ...). */
export function escposCommands(tokens: readonly EscposToken[]): string[] {
  return tokens.flatMap((t) => (t.kind === 'command' ? [t.name] : []))
}

/** Whether the last command is a paper cut (`GS V`, or the obsolete `ESC i` / `ESC m`). */
export function endsWithCut(tokens: readonly EscposToken[]): boolean {
  const last = tokens.at(-1)
  return last?.kind === 'command' && ['GS V', 'ESC i', 'ESC m'].includes(last.name)
}

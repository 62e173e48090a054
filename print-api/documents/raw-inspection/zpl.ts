import { finding, type RawFinding } from './finding.ts'
import { sgdAt, sgdSessionLine } from './sgd.ts'

// ZPL tokenizer. A command is a prefix (format `^` or control `~`) and two letters, case-insensitive; the
// prefixes and the parameter delimiter can be changed in the stream (^CC/~CC, ^CT/~CT, ^CD/~CD), and this
// scanner follows those changes as the printer does, so `^CC+` then `+JUS` is still `^JUS`. Binary payloads
// (^GFB/^GFC, ~DY formats B and C) are skipped by their byte count: there "all control prefixes are ignored
// until the total number of bytes ... is sent". ASCII payloads (^GFA, ~DG, ~DY A/P) end at the next prefix
// (any caret or tilde "prematurely aborts the download"), exactly as they are read here.
// Source for every command below: Zebra "Programming Guide: ZPL II, ZBI 2, Set-Get-Do, Mirror, WML"
// (P1099958), command reference pages named after each command.

interface Rule {
  reason: string
  /** Which prefixes the rule covers: some codes mean something harmless with the other prefix. */
  prefixes: '^~' | '^'
}

const RULES: Record<string, Rule> = {
  // ^NS Change Wired Networking Settings; ^ND Change Network Settings; ^NB Search for Wired Print Server
  // during Network Boot; ^NC Select the Primary Network Device; ^NN Set SNMP; ^NP Set Primary/Secondary
  // Device; ^NT Set SMTP; ^NW Set Web Authentication Timeout Value; ^NI Network ID Number; ^KC Set Client
  // Identifier (DHCP option 61); ^KN Define Printer Name (network name); ^SX Set ZebraNet Alert (alert
  // destinations: e-mail, SNMP trap, TCP/UDP host)
  NS: { reason: 'zpl_network_settings', prefixes: '^~' },
  ND: { reason: 'zpl_network_settings', prefixes: '^~' },
  NB: { reason: 'zpl_network_settings', prefixes: '^~' },
  NC: { reason: 'zpl_network_settings', prefixes: '^' }, // ~NC is Network Connect (RS-485), harmless
  NN: { reason: 'zpl_network_settings', prefixes: '^~' },
  NP: { reason: 'zpl_network_settings', prefixes: '^~' },
  NT: { reason: 'zpl_network_settings', prefixes: '^' }, // ~NT sets the printer transparent, harmless
  NW: { reason: 'zpl_network_settings', prefixes: '^~' },
  NI: { reason: 'zpl_network_settings', prefixes: '^~' },
  KC: { reason: 'zpl_network_settings', prefixes: '^~' },
  KN: { reason: 'zpl_network_settings', prefixes: '^~' },
  SX: { reason: 'zpl_network_settings', prefixes: '^~' },
  // ^WA Set Antenna Parameters; ^WE Set WEP Mode; ^WI Change Wireless Network Settings; ^WL Set LEAP
  // Parameters; ^WP Set Wireless Password; ^WR Set Transmit Rate; ^WS Set Wireless Radio Card Values;
  // ^WX Configure Wireless Securities. (~WL prints the network configuration label and ~WR resets the
  // radio card: neither changes a setting. ^WF, ^WT, ^WV are RFID encoding commands and pass.)
  WA: { reason: 'zpl_wireless_settings', prefixes: '^~' },
  WE: { reason: 'zpl_wireless_settings', prefixes: '^~' },
  WI: { reason: 'zpl_wireless_settings', prefixes: '^~' },
  WL: { reason: 'zpl_wireless_settings', prefixes: '^' },
  WP: { reason: 'zpl_wireless_settings', prefixes: '^~' },
  WR: { reason: 'zpl_wireless_settings', prefixes: '^' },
  WS: { reason: 'zpl_wireless_settings', prefixes: '^~' },
  WX: { reason: 'zpl_wireless_settings', prefixes: '^~' },
  // ^SC Set Serial Communications ("A ^JUS command causes the changes ... to persist")
  SC: { reason: 'zpl_serial_settings', prefixes: '^~' },
  // ^KP Define Password (front panel password)
  KP: { reason: 'zpl_password', prefixes: '^~' },
  // ^JB Initialize Flash Memory; ~JB Reset Optional Memory: both erase stored objects and settings files
  JB: { reason: 'zpl_memory_initialize', prefixes: '^~' },
  // ^JI / ~JI Start Zebra BASIC Interpreter: a ZBI program can change any setting (SETVAR) and autostart
  JI: { reason: 'zpl_zbi_program', prefixes: '^~' },
}

/** ~DY extensions for wireless security credentials (~DY: "NRD = Non Readable File", "PAC = Protected Access
 * Credential", the certificate and key files of the wireless print server). */
const CREDENTIAL_EXTENSIONS = new Set(['NRD', 'PAC'])

/** Commands that store an object by name; `AUTOEXEC.ZPL` runs at every power-up (^DF Download Format,
 * ^TO Transfer Object, ^IS Image Save, ~DG Download Graphics, ~DY Download Objects). */
const STORING = new Set(['DF', 'TO', 'IS', 'DG', 'DY'])

const CR = 0x0d
const LF = 0x0a

interface State {
  caret: number
  tilde: number
  delimiter: number
}

/** The next byte at or after `from` that is not CR/LF (the printer ignores line breaks in commands). */
function skipBreaks(bytes: Buffer, from: number): number {
  let i = from
  while (bytes[i] === CR || bytes[i] === LF) i++
  return i
}

/** Up to 256 characters of parameters from `from` to the next prefix, CR/LF removed. */
function parameters(bytes: Buffer, from: number, state: State): string {
  let text = ''
  for (let i = from; i < bytes.length && text.length < 256; i++) {
    const c = bytes[i] ?? 0
    if (c === state.caret || c === state.tilde) break
    if (c !== CR && c !== LF) text += String.fromCharCode(c)
  }
  return text
}

/** The offset just past the `count`-th delimiter after `from`, or -1 when a prefix or 512 bytes come first. */
function pastDelimiters(bytes: Buffer, from: number, count: number, state: State): number {
  let seen = 0
  for (let i = from; i < bytes.length && i < from + 512; i++) {
    const c = bytes[i]
    if (c === state.caret || c === state.tilde) return -1
    if (c === state.delimiter && ++seen === count) return i + 1
  }
  return -1
}

function byteCount(field: string | undefined): number {
  const n = Number.parseInt(field?.trim() ?? '', 10)
  return Number.isFinite(n) && n > 0 ? n : 0
}

type Step = number | RawFinding

/** The command whose prefix is at `start`; the letters begin at `from`. */
function command(bytes: Buffer, start: number, from: number, prefix: '^' | '~', state: State): Step {
  const a = skipBreaks(bytes, from)
  const b = skipBreaks(bytes, a + 1)
  const code = String.fromCharCode(bytes[a] ?? 0, bytes[b] ?? 0).toUpperCase()
  const next = b + 1
  const shown = () => `${String.fromCharCode(bytes[start] ?? 0)}${code}`
  if (code === 'CC' || code === 'CT' || code === 'CD') {
    // ^CC/~CC Change Caret, ^CT/~CT Change Tilde, ^CD/~CD Change Delimiter: the next character
    const at = skipBreaks(bytes, next)
    const value = bytes[at]
    if (value === undefined) return at
    if (code === 'CC') state.caret = value
    else if (code === 'CT') state.tilde = value
    else state.delimiter = value
    return at + 1
  }
  if (code === 'JU') {
    // ^JU Configuration Update: S saves the current settings, F/N/A reload factory (network) defaults,
    // R recalls the last saved settings
    const letter = String.fromCharCode(bytes[skipBreaks(bytes, next)] ?? 0x20).toUpperCase()
    const reason =
      letter === 'S'
        ? 'zpl_save_configuration'
        : 'FNA'.includes(letter)
          ? 'zpl_restore_defaults'
          : 'zpl_configuration_update'
    return finding(reason, `${shown()}${letter.trim()}`, start)
  }
  const rule = RULES[code]
  if (rule?.prefixes.includes(prefix)) return finding(rule.reason, shown(), start)
  if (!STORING.has(code) && code !== 'GF') return next
  const params = parameters(bytes, next, state)
  const fields = params.split(String.fromCharCode(state.delimiter))
  if (STORING.has(code) && /AUTOEXEC/i.test(code === 'DG' || code === 'DY' ? (fields[0] ?? '') : params)) {
    return finding('zpl_autoexec', `${shown()}${params.slice(0, 40)}`, start)
  }
  if (prefix === '^' && code === 'GF' && /^[BC]$/i.test(fields[0]?.trim() ?? '')) {
    // ^GFa,b,c,d,data: for binary (B) and compressed binary (C) data, b bytes follow parameter d;
    // b is 1 to 99999 and "out-of-range values are set to the nearest limit"
    const data = pastDelimiters(bytes, next, 4, state)
    return data === -1 ? next : data + Math.min(byteCount(fields[1]), 99_999)
  }
  if (prefix === '~' && code === 'DY') {
    // ~DYd:f,b,x,t,w,data: x names the stored file type; b = B or C means t bytes of binary data
    if (CREDENTIAL_EXTENSIONS.has(fields[2]?.trim().toUpperCase() ?? '')) {
      return finding('zpl_wireless_settings', `${shown()} ${fields[2]?.trim()}`, start)
    }
    if (/^[BC]$/i.test(fields[1]?.trim() ?? '')) {
      const data = pastDelimiters(bytes, next, 5, state)
      return data === -1 ? next : data + byteCount(fields[3])
    }
  }
  return next
}

/** The first ZPL command (or embedded SGD command) that changes stored configuration, or null. */
export function findForbiddenZpl(bytes: Buffer): RawFinding | null {
  const state: State = { caret: 0x5e, tilde: 0x7e, delimiter: 0x2c }
  let lineStart = true
  let session = false
  let sgdCheckedUntil = 0
  let i = 0
  while (i < bytes.length) {
    const c = bytes[i] ?? 0
    if (c === CR || c === LF) {
      lineStart = true
      i++
      continue
    }
    if (lineStart && session && c !== 0x20 && c !== 0x09) {
      const line = sgdSessionLine(bytes, i)
      if (line === 'end') session = false
      else if (line) return line
    }
    if (c !== 0x20 && c !== 0x09) lineStart = false
    if (c === state.caret || c === state.tilde) {
      const next = command(bytes, i, i + 1, c === state.caret ? '^' : '~', state)
      if (typeof next !== 'number') return next
      i = Math.max(next, i + 1)
      continue
    }
    const sgd = (c === 0x21 || c === 0x7b) && i >= sgdCheckedUntil ? sgdAt(bytes, i) : null
    if (sgd?.finding) return sgd.finding
    if (sgd) {
      session = sgd.opensSession
      sgdCheckedUntil = sgd.next
    }
    i++
  }
  return null
}

import { finding, type RawFinding } from './finding.ts'

// TSPL/TSPL2 tokenizer. Commands are lines ended by CR/LF (TSC "TSPL/TSPL2 Programming Manual", Document
// Conventions); keywords are matched case-insensitively. Two commands carry binary data of a stated length,
// skipped here so that image or file bytes never read as commands:
//   BITMAP X,Y,width,height,mode,data      width (bytes) × height (dots) bytes of data
//   DOWNLOAD [n,]"FILENAME",size,data      size bytes of data (a data file)
// A program download, DOWNLOAD [n,]"NAME.BAS" ... EOP, is plain TSPL lines and is checked like any other
// line; a .BAS file sent as a sized data file is checked the same way, since RUN would execute it.
// A BASIC line can hold a command after THEN or ELSE, so those are checked too.

const CR = 0x0d
const LF = 0x0a

type Step = number | RawFinding

/** The command words of one line: the first word, and the first word after each THEN / ELSE. */
function commandWords(line: string): string[] {
  const bare = line.replace(/"[^"]*"?/g, '""')
  return bare
    .split(/\bTHEN\b|\bELSE\b/i)
    .map((part) => part.trim())
    .filter((part) => part !== '')
}

/** The forbidden command that `statement` (one command, without quotes' contents) starts with, if any. */
function forbidden(statement: string): { reason: string; command: string } | null {
  const upper = statement.toUpperCase()
  // INITIALPRINTER restores the printer's factory default settings (TSPL2 manual, INITIALPRINTER)
  if (/^INITIALPRINTER\b/.test(upper)) return { reason: 'tspl_factory_reset', command: 'INITIALPRINTER' }
  // NET DHCP / NET IP "ip","mask","gateway" / NET PORT / NET NAME: Ethernet settings (TSPL2 manual,
  // Ethernet commands)
  if (/^NET\b/.test(upper)) return { reason: 'tspl_network_settings', command: upper.slice(0, 40) }
  // WLAN OFF / SSID / WPA / WEP / DHCP / IP / PORT: Wi-Fi module settings (TSPL2 manual, Wi-Fi commands)
  if (/^WLAN\b/.test(upper)) return { reason: 'tspl_wireless_settings', command: upper.slice(0, 40) }
  // SET COM1 baud,parity,data,stop: serial port settings (TSPL2 manual, SET COM1)
  if (/^SET\s+COM\d*\b/.test(upper)) return { reason: 'tspl_serial_settings', command: upper.slice(0, 40) }
  // MOVE moves downloaded files from DRAM to flash memory (TSPL2 manual, MOVE)
  if (/^MOVE\b/.test(upper)) return { reason: 'tspl_flash_download', command: 'MOVE' }
  // KILL F,"FILE" / KILL E,"FILE" deletes files from flash memory or the memory card (TSPL2 manual, KILL)
  if (/^KILL\s*[FE]\s*,/.test(upper)) return { reason: 'tspl_flash_delete', command: upper.slice(0, 40) }
  return null
}

/** DOWNLOAD [n,]"FILENAME"[,size,data]: n F = flash, E = memory card; AUTO.BAS runs at power-on (TSPL2
 * manual, DOWNLOAD: "Printers will execute the program automatically when turning on power, if one of the
 * downloaded programs is named AUTO.BAS"). */
function download(bytes: Buffer, start: number, lineEnd: number, line: string): Step {
  const head = /^\s*DOWNLOAD\s*(?:([A-Z])\s*,\s*)?"([^"]*)"\s*(,\s*(\d+)\s*,)?/i.exec(line)
  if (!head) return lineEnd
  const memory = head[1]?.toUpperCase()
  const name = head[2] ?? ''
  if (/^AUTO\.BAS$/i.test(name.trim())) return finding('tspl_autorun_program', `DOWNLOAD "${name}"`, start)
  if (memory === 'F' || memory === 'E')
    return finding('tspl_flash_download', `DOWNLOAD ${memory},"${name}"`, start)
  if (head[3] === undefined) return lineEnd // a program follows, line by line, until EOP
  const data = start + Buffer.byteLength(head[0], 'latin1')
  const end = data + Number.parseInt(head[4] ?? '0', 10)
  if (/\.BAS$/i.test(name.trim())) {
    const inner = findForbiddenTspl(bytes.subarray(data, Math.min(end, bytes.length)))
    if (inner) return { ...inner, offset: inner.offset + data }
  }
  return end
}

/** BITMAP X,Y,width,height,mode,data: the data begins after the fifth comma. */
function bitmap(bytes: Buffer, start: number, lineEnd: number): Step {
  const fields: string[] = []
  let field = ''
  for (let i = start; i < bytes.length && i < start + 128; i++) {
    const c = bytes[i] ?? 0
    if (c === CR || c === LF) return lineEnd
    if (c !== 0x2c) {
      field += String.fromCharCode(c)
      continue
    }
    fields.push(field)
    field = ''
    if (fields.length === 5) {
      const width = Number.parseInt(fields[2] ?? '', 10)
      const height = Number.parseInt(fields[3] ?? '', 10)
      return Number.isFinite(width) && Number.isFinite(height) ? i + 1 + Math.max(0, width * height) : lineEnd
    }
  }
  return lineEnd
}

function lineEndFrom(bytes: Buffer, from: number): number {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] === CR || bytes[i] === LF) return i
  }
  return bytes.length
}

function lineStep(bytes: Buffer, start: number): Step {
  const end = lineEndFrom(bytes, start)
  const line = bytes.toString('latin1', start, end)
  const keyword = /^\s*([A-Za-z]+)/.exec(line)?.[1]?.toUpperCase()
  if (keyword === 'BITMAP') return bitmap(bytes, start, end)
  if (keyword === 'DOWNLOAD') return download(bytes, start, end, line)
  for (const statement of commandWords(line)) {
    const hit = forbidden(statement)
    if (hit) return finding(hit.reason, hit.command, start)
  }
  return end
}

/** The first TSPL command that changes stored settings, network settings or flash contents, or null. */
export function findForbiddenTspl(bytes: Buffer): RawFinding | null {
  let i = 0
  while (i < bytes.length) {
    if (bytes[i] === CR || bytes[i] === LF) {
      i++
      continue
    }
    const next = lineStep(bytes, i)
    if (typeof next !== 'number') return next
    i = Math.max(next, i + 1)
  }
  return null
}

import { byteAt, type RawFinding } from './finding.ts'
import { sgdAt, sgdSessionLine } from './sgd.ts'

// CPCL tokenizer (Zebra "CPCL Programming Guide", P1073699). CPCL is line oriented: a session starts with a
// `!` header line (`! 0 200 200 height qty` for a label, `! UTILITIES` / `! U` for utilities, `! U1` for one
// command) and its commands follow one per line. What CPCL printers accept that changes stored settings are
// the Set-Get-Do commands (`! U1 setvar`, `! U1 do`, their session and JSON forms; see sgd.ts). Label and
// utility commands such as SET-TOF, SETFF or ON-FEED are routine in real print jobs and pass.
// Graphics carry binary data that is skipped so it never reads as lines:
//   CG/COMPRESSED-GRAPHICS, VCG/VCOMPRESSED-GRAPHICS {width} {height} {x} {y} {data}: width (bytes) ×
//   height (dots) binary bytes after the single space that ends {y} ("Graphics Commands")
//   PCX {x} {y} then, on the next line, a PCX file; its length comes from its own header and RLE data
//   ("PCX" command). `PCX x y !<NAME.PCX` prints a stored file and carries no data.

const CR = 0x0d
const LF = 0x0a

type Step = number | RawFinding

function lineEndFrom(bytes: Buffer, from: number): number {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] === CR || bytes[i] === LF) return i
  }
  return bytes.length
}

/** Past the line break (CR LF, LF or CR) at `end`. */
function pastBreak(bytes: Buffer, end: number): number {
  if (bytes[end] === CR) return bytes[end + 1] === LF ? end + 2 : end + 1
  return bytes[end] === LF ? end + 1 : end
}

function u16(bytes: Buffer, index: number): number {
  return byteAt(bytes, index) + byteAt(bytes, index + 1) * 256
}

/** The length of the PCX file at `start` (ZSoft PCX: 128-byte header, RLE rows, optional 256-colour palette). */
export function pcxLength(bytes: Buffer, start: number): number {
  if (bytes.length - start < 128 || bytes[start] !== 0x0a) return 0
  const height = u16(bytes, start + 10) - u16(bytes, start + 6) + 1
  const total = byteAt(bytes, start + 65) * u16(bytes, start + 66) * Math.max(0, height)
  let j = start + 128
  for (let produced = 0; produced < total && j < bytes.length; ) {
    const v = bytes[j] ?? 0
    if ((v & 0xc0) === 0xc0) {
      produced += v & 0x3f
      j += 2
    } else {
      produced++
      j++
    }
  }
  if (byteAt(bytes, start + 3) === 8 && bytes[j] === 0x0c) j += 769
  return Math.min(j, bytes.length) - start
}

const COMPRESSED_GRAPHICS = new Set(['CG', 'COMPRESSED-GRAPHICS', 'VCG', 'VCOMPRESSED-GRAPHICS'])

interface Session {
  open: boolean
}

function lineStep(bytes: Buffer, start: number, session: Session): Step {
  const first = bytes[start]
  if (first === 0x21 || first === 0x7b) {
    const sgd = sgdAt(bytes, start)
    if (sgd?.finding) return sgd.finding
    // any other `!` header line (a label) ends a utility session
    if (first === 0x21) session.open = sgd?.opensSession ?? false
    if (sgd) return Math.max(sgd.next, start + 1)
  } else if (session.open) {
    const line = sgdSessionLine(bytes, start)
    if (line === 'end') session.open = false
    else if (line) return line
  }
  const end = lineEndFrom(bytes, start)
  const line = bytes.toString('latin1', start, end)
  const keyword = /^(\S+)/.exec(line)?.[1]?.toUpperCase() ?? ''
  if (COMPRESSED_GRAPHICS.has(keyword)) {
    const head = /^\S+ +(\d+) +(\d+) +(\d+) +(\d+) /.exec(line)
    if (!head) return end
    const size = Number.parseInt(head[1] ?? '0', 10) * Number.parseInt(head[2] ?? '0', 10)
    return start + head[0].length + size
  }
  if (keyword === 'PCX' && !line.includes('!<')) {
    const data = pastBreak(bytes, end)
    return data + pcxLength(bytes, data)
  }
  return end
}

/** The first CPCL line that changes stored settings (an SGD set or do), or null. */
export function findForbiddenCpcl(bytes: Buffer): RawFinding | null {
  const session: Session = { open: false }
  let i = 0
  while (i < bytes.length) {
    const c = bytes[i]
    if (c === CR || c === LF || c === 0x20 || c === 0x09) {
      i++
      continue
    }
    const next = lineStep(bytes, i, session)
    if (typeof next !== 'number') return next
    i = Math.max(next, i + 1)
  }
  return null
}

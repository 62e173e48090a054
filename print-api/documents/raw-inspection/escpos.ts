import { ESC_FIXED, FS_FIXED, GS_FIXED } from './escpos-lengths.ts'
import { byteAt, finding, type RawFinding } from './finding.ts'

// ESC/POS tokenizer. Command lengths follow the Epson "ESC/POS Command Reference" (Application Programming
// Guide; online at download4.epson.biz/sec_pubs/pos/reference_en/escpos/). Every length-prefixed command is
// skipped whole, so the bytes of a raster image, a bar code or a 2D symbol are never read as commands.
// A command this table does not know is taken as its two code bytes; its parameters then read as text,
// which can only refuse (never hide) something. Likewise, image data is skipped only when the command's
// parameters are within the reference's ranges: out of range, printers differ (ESC * with an unknown m
// "processes nL and the data as normal data"; some clones ignore xH of GS v 0), so the data is read as
// commands. Caveat: a clone that does not implement a command at all may read its data as commands too.

const DLE = 0x10
const ESC = 0x1b
const FS = 0x1c
const GS = 0x1d

/** The next offset, or the refused command. */
type Step = number | RawFinding

/** GS ( L / GS 8 L functions that write NV graphics memory: 65 delete all, 66 delete one, 67/68 define. */
const NV_GRAPHICS_FUNCTIONS = new Set([65, 66, 67, 68])
/** GS ( M functions that write the storage area: 1/49 save settings, 3/51 select what loads at start-up. */
const SAVE_SETTINGS_FUNCTIONS = new Set([1, 49, 3, 51])

function u16(bytes: Buffer, index: number): number {
  return byteAt(bytes, index) + byteAt(bytes, index + 1) * 256
}

function u32(bytes: Buffer, index: number): number {
  return u16(bytes, index) + u16(bytes, index + 2) * 65536
}

/** The offset just past the first NUL at or after `from` (or the end). */
function pastNul(bytes: Buffer, from: number): number {
  const nul = bytes.indexOf(0, from)
  return nul === -1 ? bytes.length : nul + 1
}

function escStep(bytes: Buffer, i: number): Step {
  const n = byteAt(bytes, i + 1)
  const fixed = ESC_FIXED[n]
  if (fixed !== undefined) return i + 2 + fixed
  switch (n) {
    case 0x26: {
      // ESC & y c1 c2 [x d1...d(y×x)]... define user-defined characters (RAM): one block per character;
      // y = 2 or 3, 32 ≤ c1 ≤ c2 ≤ 126, x ≤ 12
      const y = byteAt(bytes, i + 2)
      const c1 = byteAt(bytes, i + 3)
      const c2 = byteAt(bytes, i + 4)
      if (y < 2 || y > 3 || c1 < 32 || c2 > 126 || c1 > c2) return i + 2
      let j = i + 5
      for (let c = c1; c <= c2 && j < bytes.length; c++) {
        const x = byteAt(bytes, j)
        if (x > 12) return j
        j += 1 + y * x
      }
      return j
    }
    case 0x2a: {
      // ESC * m nL nH d1...dk bit image: k = n for 8-dot modes (m 0, 1), 3n for 24-dot modes (m 32, 33);
      // 1 ≤ n ≤ 2047. Another m makes the printer process nL and the data as normal data.
      const m = byteAt(bytes, i + 2)
      const n16 = u16(bytes, i + 3)
      if (n16 < 1 || n16 > 2047) return i + 3
      if (m === 0 || m === 1) return i + 5 + n16
      return m === 32 || m === 33 ? i + 5 + 3 * n16 : i + 3
    }
    case 0x28:
      // ESC ( A / ESC ( Y pL pH ...: beeper, two-color print
      return i + 5 + u16(bytes, i + 3)
    case 0x44: {
      // ESC D n1...nk NUL horizontal tabs, k ≤ 32
      const nul = bytes.indexOf(0, i + 2)
      return nul !== -1 && nul <= i + 2 + 32 ? nul + 1 : i + 2 + 32
    }
    case 0x5b:
      // ESC [ } switches NCR/Unisys ESC/POS printers into flash (firmware) download mode: NCR 7197 Owner's
      // Guide, "Flash Download Commands", "Switch to Flash Download Mode" (1B 5B 7D)
      if (byteAt(bytes, i + 2) === 0x7d) return finding('firmware_download', 'ESC [ }', i)
      return i + 2
    default:
      return i + 2
  }
}

function gsParenStep(bytes: Buffer, i: number): Step {
  const x = byteAt(bytes, i + 2)
  const next = i + 5 + u16(bytes, i + 3)
  switch (x) {
    case 0x45:
      // GS ( E user setup commands: user setting mode, memory switches, customized values, serial/Bluetooth/
      // network interface settings, paper layout; all kept in NV memory (Command Reference, GS ( E)
      return finding('escpos_user_setup', `GS ( E fn=${byteAt(bytes, i + 5)}`, i)
    case 0x43:
      // GS ( C edit NV user memory: store, delete, delete all records (Command Reference, GS ( C)
      return finding('escpos_nv_user_memory', `GS ( C fn=${byteAt(bytes, i + 6)}`, i)
    case 0x4c: {
      // GS ( L pL pH m fn: fn 65/66 delete NV graphics, 67/68 define NV graphics (Command Reference, GS ( L)
      const fn = byteAt(bytes, i + 6)
      if (NV_GRAPHICS_FUNCTIONS.has(fn)) return finding('escpos_nv_graphics', `GS ( L fn=${fn}`, i)
      return next
    }
    case 0x4d: {
      // GS ( M pL pH fn m: fn 1 saves the work area to the NV storage area, fn 3 selects the settings loaded
      // at initialization (Command Reference, GS ( M "Customize printer control value(s)")
      const fn = byteAt(bytes, i + 5)
      if (SAVE_SETTINGS_FUNCTIONS.has(fn)) return finding('escpos_save_settings', `GS ( M fn=${fn}`, i)
      return next
    }
    default:
      // GS ( A, D, H, K, N, P, Q, k (2D codes), z ...: pL pH bytes follow
      return next
  }
}

function rasterImage(bytes: Buffer, i: number): number {
  if (byteAt(bytes, i + 2) !== 0x30) return i + 3
  const m = byteAt(bytes, i + 3)
  const x = byteAt(bytes, i + 4)
  const y = u16(bytes, i + 6)
  const valid =
    (m <= 3 || (m >= 48 && m <= 51)) && x >= 1 && byteAt(bytes, i + 5) === 0 && y >= 1 && y <= 4095
  return valid ? i + 8 + x * y : i + 3
}

function gsStep(bytes: Buffer, i: number): Step {
  const n = byteAt(bytes, i + 1)
  const fixed = GS_FIXED[n]
  if (fixed !== undefined) return i + 2 + fixed
  switch (n) {
    case 0x28:
      return gsParenStep(bytes, i)
    case 0x38: {
      // GS 8 L p1 p2 p3 p4 m fn: GS ( L with a 32-bit length
      if (byteAt(bytes, i + 2) !== 0x4c) return i + 3
      const fn = byteAt(bytes, i + 8)
      if (NV_GRAPHICS_FUNCTIONS.has(fn)) return finding('escpos_nv_graphics', `GS 8 L fn=${fn}`, i)
      return i + 7 + u32(bytes, i + 3)
    }
    case 0x2a: {
      // GS * x y d1...d(x×y×8) define downloaded bit image (RAM): 1 ≤ x ≤ 255, 1 ≤ y ≤ 48, x×y ≤ 1536
      const x = byteAt(bytes, i + 2)
      const y = byteAt(bytes, i + 3)
      return x >= 1 && y >= 1 && y <= 48 && x * y <= 1536 ? i + 4 + x * y * 8 : i + 2
    }
    case 0x43: {
      // GS C 0 n m / GS C 1 aL aH bL bH n r / GS C 2 nL nH / GS C ; sa ; sb ; sn ; sr ; sc ; (counters)
      const sub = byteAt(bytes, i + 2)
      if (sub === 0x30 || sub === 0x32) return i + 5
      if (sub === 0x31) return i + 9
      if (sub !== 0x3b) return i + 3
      let j = i + 3
      for (let semicolons = 1; semicolons < 6 && j < bytes.length && j < i + 64; j++) {
        if (bytes[j] === 0x3b) semicolons++
      }
      return j
    }
    case 0x44: {
      // GS D m fn a kc1 kc2 b c d1...dk Windows BMP graphics: fn 67 defines NV graphics (Command Reference,
      // GS D <Function 67>); fn 83 defines download graphics (RAM), k from the BMP file header
      const fn = byteAt(bytes, i + 3)
      if (fn === 67) return finding('escpos_nv_graphics', 'GS D fn=67', i)
      if (fn !== 83) return i + 4
      const data = i + 9
      return bytes[data] === 0x42 && bytes[data + 1] === 0x4d ? data + u32(bytes, data + 2) : data
    }
    case 0x51:
    case 0x76:
      // GS v 0 m xL xH yL yH d1...dk raster bit image, GS Q 0 variable vertical size bit image:
      // k = (xL + xH×256) × (yL + yH×256). Skipped for m 0–3/48–51, xH = 0 (at most 255 bytes, wider than
      // any receipt) and 1 ≤ y ≤ 4095, where all readings of the command agree; taller images come in bands.
      return rasterImage(bytes, i)
    case 0x56: {
      // GS V m [n] cut: m 0/1/48/49 take no n; 65/66/97/98/103/104 take n
      const m = byteAt(bytes, i + 2)
      return m === 0 || m === 1 || m === 48 || m === 49 ? i + 3 : i + 4
    }
    case 0x67: {
      // GS g 0 m nL nH initializes a maintenance counter kept in NV memory (Command Reference, GS g 0);
      // GS g 2 m nL nH only transmits one
      const sub = byteAt(bytes, i + 2)
      if (sub === 0x30) return finding('escpos_maintenance_counter', 'GS g 0', i)
      return sub === 0x32 ? i + 6 : i + 3
    }
    case 0x6b: {
      // GS k m d1...dk NUL (m 0–6) or GS k m n d1...dn (m 65–79) bar code
      const m = byteAt(bytes, i + 2)
      if (m <= 6) return pastNul(bytes, i + 3)
      return m >= 65 && m <= 79 ? i + 4 + byteAt(bytes, i + 3) : i + 3
    }
    case 0x7a:
      // GS z 0 t1 t2 online recovery wait time
      return i + 5
    default:
      return i + 2
  }
}

function fsStep(bytes: Buffer, i: number): Step {
  const n = byteAt(bytes, i + 1)
  const fixed = FS_FIXED[n]
  if (fixed !== undefined) return i + 2 + fixed
  switch (n) {
    case 0x28:
      // FS ( A, C, E, L, e ... pL pH
      return i + 5 + u16(bytes, i + 3)
    case 0x32:
      // FS 2 c1 c2 d1...d72 define user-defined Kanji (24 × 24 dots)
      return i + 4 + 72
    case 0x67: {
      // FS g 1 m a1 a2 a3 a4 nL nH d1...dk writes NV user memory (Command Reference, FS g 1);
      // FS g 2 m a1 a2 a3 a4 nL nH only reads it
      const sub = byteAt(bytes, i + 2)
      if (sub === 0x31) return finding('escpos_nv_user_memory', 'FS g 1', i)
      return sub === 0x32 ? i + 10 : i + 3
    }
    case 0x71:
      // FS q n [xL xH yL yH d1...dk]... defines NV bit images (Command Reference, FS q, obsolete)
      return finding('escpos_nv_graphics', 'FS q', i)
    default:
      return i + 2
  }
}

function dleStep(bytes: Buffer, i: number): Step {
  const n = byteAt(bytes, i + 1)
  const fn = byteAt(bytes, i + 2)
  // DLE EOT n [a], DLE ENQ n, DLE DC4 fn ...: real-time commands
  if (n === 0x04) return fn === 7 || fn === 8 ? i + 4 : i + 3
  if (n === 0x05) return i + 3
  if (n === 0x14) {
    if (fn === 1 || fn === 2 || fn === 3) return i + 5
    if (fn === 7) return i + 4
    return fn === 8 ? i + 10 : i + 3
  }
  return i + 1
}

function step(bytes: Buffer, i: number): Step {
  switch (bytes[i]) {
    case ESC:
      return escStep(bytes, i)
    case GS:
      return gsStep(bytes, i)
    case FS:
      return fsStep(bytes, i)
    case DLE:
      return dleStep(bytes, i)
    default:
      return i + 1
  }
}

/** The first ESC/POS command that writes the printer's NV memory, settings or firmware, or null. */
export function findForbiddenEscPos(bytes: Buffer): RawFinding | null {
  let i = 0
  while (i < bytes.length) {
    const next = step(bytes, i)
    if (typeof next !== 'number') return next
    i = Math.max(next, i + 1)
  }
  return null
}

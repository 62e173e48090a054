import { type BinaryLocator, decodeLines, type LineCommand } from './line-commands.ts'

/**
 * A minimal TSPL decoder for tests (TSC "TSPL/TSPL2 Programming Language"): one command per line; `BITMAP
 * x,y,width,height,mode,data` carries width (bytes) × height rows of binary data after the fifth comma.
 */
const bitmap: BinaryLocator = (_line, lineStart, bytes) => {
  const head = bytes.toString('latin1', lineStart, Math.min(bytes.length, lineStart + 64))
  const match = /^BITMAP\s+\d+\s*,\s*\d+\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*\d+\s*,/i.exec(head)
  if (!match) return null
  return { start: lineStart + match[0].length, length: Number(match[1]) * Number(match[2]) }
}

export function decodeTspl(bytes: Buffer): LineCommand[] {
  return decodeLines(bytes, bitmap)
}

/** The text of each `TEXT x,y,"font",rotation,xm,ym,"content"` command. */
export function tsplTexts(commands: readonly LineCommand[]): string[] {
  return commands.filter((c) => c.command === 'TEXT').map((c) => /"([^"]*)"\s*$/.exec(c.args)?.[1] ?? '')
}

import { type BinaryLocator, decodeLines, type LineCommand } from './line-commands.ts'

/**
 * A minimal CPCL decoder for tests (Zebra "Mobile Printer CPCL Programming Manual"): one command per line,
 * starting with the `! offset hres vres height qty` header and ending with `PRINT`; `CG`/`COMPRESSED-GRAPHICS
 * width height x y data` carries width (bytes) × height binary bytes after the fourth number.
 */
const graphics: BinaryLocator = (_line, lineStart, bytes) => {
  const head = bytes.toString('latin1', lineStart, Math.min(bytes.length, lineStart + 64))
  const match = /^(?:CG|COMPRESSED-GRAPHICS)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s/i.exec(head)
  if (!match) return null
  return { start: lineStart + match[0].length, length: Number(match[1]) * Number(match[2]) }
}

export function decodeCpcl(bytes: Buffer): LineCommand[] {
  return decodeLines(bytes, graphics)
}

/** The text of each `TEXT font size x y content` (or `T`) command. */
export function cpclTexts(commands: readonly LineCommand[]): string[] {
  return commands
    .filter((c) => c.command === 'TEXT' || c.command === 'T')
    .map((c) => c.args.split(/\s+/).slice(4).join(' '))
}

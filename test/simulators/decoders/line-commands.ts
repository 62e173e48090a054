/**
 * TSPL and CPCL are line-oriented: one command per line (CR LF or LF), the command word first. A few
 * commands carry binary image data of a size given by their parameters, right after them on the same line;
 * the language decoders say where that data starts and how long it is.
 */
export interface LineCommand {
  /** The command word in upper case: `SIZE`, `TEXT`, `BITMAP`, `!`, `PRINT`. */
  command: string
  /** The rest of the line (for binary commands, the parameters before the data). */
  args: string
  /** The binary data of an image command. */
  data?: Buffer
}

/** For a line that starts an image command: where its data starts (index in the buffer) and how long it is. */
export type BinaryLocator = (
  line: string,
  lineStart: number,
  bytes: Buffer,
) => { start: number; length: number } | null

export function decodeLines(bytes: Buffer, binary: BinaryLocator): LineCommand[] {
  const commands: LineCommand[] = []
  let at = 0
  while (at < bytes.length) {
    let lineEnd = bytes.indexOf(0x0a, at)
    if (lineEnd < 0) lineEnd = bytes.length
    const line = bytes.toString('latin1', at, lineEnd).replace(/\r$/, '')
    const image = binary(line, at, bytes)
    if (image) {
      const head = bytes.toString('latin1', at, image.start)
      const data = Buffer.from(bytes.subarray(image.start, image.start + image.length))
      commands.push({ ...split(head.replace(/,$/, '').trimEnd()), data })
      at = image.start + image.length
      // The line break after the data, if any.
      if (bytes[at] === 0x0d) at++
      if (bytes[at] === 0x0a) at++
      continue
    }
    if (line.trim() !== '') commands.push(split(line.trim()))
    at = lineEnd + 1
  }
  return commands
}

function split(line: string): { command: string; args: string } {
  const space = line.search(/\s/)
  if (space < 0) return { command: line.toUpperCase(), args: '' }
  return { command: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() }
}

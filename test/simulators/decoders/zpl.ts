/**
 * A minimal ZPL decoder for tests: splits ZPL II text into commands (`^FO` + `50,50`), following the ZPL II
 * Programming Guide's syntax: a format or control prefix (`^` / `~`) and a two-letter command, except `^A`
 * (scalable/bitmapped font), whose next character is the font name and so part of its parameters.
 */
export interface ZplCommand {
  /** Prefix and name in upper case: `^XA`, `^FO`, `^A`, `~HS`. */
  command: string
  /** Everything up to the next prefix, as sent (`^FD` keeps its spaces). */
  params: string
}

export function decodeZpl(bytes: Buffer): ZplCommand[] {
  const text = bytes.toString('latin1')
  const commands: ZplCommand[] = []
  const prefix = /[\^~]/g
  let match = prefix.exec(text)
  while (match) {
    const at = match.index
    const nameLength = text[at + 1]?.toUpperCase() === 'A' && text[at] === '^' ? 1 : 2
    const nameEnd = at + 1 + nameLength
    prefix.lastIndex = nameEnd
    const next = prefix.exec(text)
    const end = next ? next.index : text.length
    commands.push({
      command: text.slice(at, nameEnd).toUpperCase(),
      params: text.slice(nameEnd, end).trimEnd(),
    })
    match = next
  }
  return commands
}

/** The labels of a stream: the commands from each `^XA` to its `^XZ`, both excluded. */
export function zplLabels(commands: readonly ZplCommand[]): ZplCommand[][] {
  const labels: ZplCommand[][] = []
  let current: ZplCommand[] | null = null
  for (const command of commands) {
    if (command.command === '^XA') current = []
    else if (command.command === '^XZ' && current) {
      labels.push(current)
      current = null
    } else current?.push(command)
  }
  return labels
}

/** The field data (`^FD`) of a label, in order. */
export function zplFieldData(commands: readonly ZplCommand[]): string[] {
  return commands.filter((c) => c.command === '^FD').map((c) => c.params)
}

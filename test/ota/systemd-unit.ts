/** The [Service] section of a unit file: each setting's values, in order. */
export function serviceSettings(unit: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  let section = ''
  for (const raw of unit.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    if (line.startsWith('[')) {
      section = line
      continue
    }
    const eq = line.indexOf('=')
    if (section !== '[Service]' || eq < 0) continue
    const key = line.slice(0, eq).trim()
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1).trim()])
  }
  return settings
}

/** An EnvironmentFile= (systemd.exec(5)): KEY=VALUE lines, # and ; comments, a value in quotes unquoted. */
export function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const eq = line.indexOf('=')
    if (eq < 0) continue
    let value = line.slice(eq + 1).trim()
    const quoted = /^"((?:[^"\\]|\\.)*)"$|^'([^']*)'$/.exec(value)
    if (quoted) value = quoted[1]?.replace(/\\(.)/g, '$1') ?? quoted[2] ?? ''
    env[line.slice(0, eq).trim()] = value
  }
  return env
}

/**
 * A command line of ExecStart= as systemd makes it (systemd.service(5), "Command lines"): words split at
 * white space, quotes removed; `${VAR}` replaced within its word, a word `$VAR` by the value's own words.
 */
export function commandLine(line: string, env: Record<string, string>): string[] {
  const words: { text: string; quoted: boolean }[] = []
  let i = 0
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++
    if (i >= line.length) break
    let text = ''
    let quoted = false
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t') {
      const c = line[i]!
      if (c === '"' || c === "'") {
        const end = line.indexOf(c, i + 1)
        text += line.slice(i + 1, end)
        quoted = true
        i = end + 1
      } else {
        text += c
        i++
      }
    }
    words.push({ text, quoted })
  }
  return words.flatMap(({ text, quoted }) => {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(text)
    if (whole && !quoted) return (env[whole[1]!] ?? '').split(/\s+/).filter(Boolean)
    return [text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? '')]
  })
}

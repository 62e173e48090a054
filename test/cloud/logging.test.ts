import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../cloud/config.ts'
import { createLogger, type LogFormat } from '../../cloud/logging.ts'
import { tempDir } from '../helpers/temp-dir.ts'

/** A stdout stand-in that keeps what is written; `isTTY` as a terminal (or a pipe) would set it. */
function output(isTTY: boolean) {
  const lines: string[] = []
  return { isTTY, lines, write: (line: string) => lines.push(line) }
}

const ESC = '\u001b['

function logOneEvent(format: LogFormat, isTTY: boolean) {
  const out = output(isTTY)
  const logger = createLogger({ logLevel: 'info', logFormat: format }, out)
  logger
    .child({ name: 'dispatch' })
    .info({ print_job_id: 'job-1', credential: 'hub_secret' }, 'print job printed')
  return out.lines
}

describe('cloud logger', () => {
  it('writes one pretty, coloured line per event when stdout is a terminal', () => {
    const lines = logOneEvent('auto', true)
    expect(lines).toHaveLength(1)
    const line = lines[0]!
    expect(line).toContain(ESC)
    const plain = stripVTControlCharacters(line)
    expect(plain).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO \(dispatch\): print job printed /)
    expect(plain).toContain('"print_job_id":"job-1"')
    expect(plain).toContain('"credential":"[Redacted]"')
    expect(plain).not.toContain('hub_secret')
    expect(line.endsWith('\n')).toBe(true)
    expect(line.indexOf('\n')).toBe(line.length - 1)
  })

  it('writes one JSON object per line when stdout is not a terminal', () => {
    const lines = logOneEvent('auto', false)
    expect(lines).toHaveLength(1)
    expect(lines[0]).not.toContain(ESC)
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      name: 'dispatch',
      msg: 'print job printed',
      print_job_id: 'job-1',
      credential: '[Redacted]',
    })
  })

  it('LOG_FORMAT=pretty gives readable lines on a pipe too, without colours', () => {
    const [line] = logOneEvent('pretty', false)
    expect(line).not.toContain(ESC)
    expect(line).toMatch(/ INFO \(dispatch\): print job printed /)
  })

  it('LOG_FORMAT=json gives JSON on a terminal', () => {
    const [line] = logOneEvent('json', true)
    expect(JSON.parse(line!)).toMatchObject({ msg: 'print job printed' })
  })

  it('reads LOG_FORMAT from the environment (auto by default) and names it when it is wrong', () => {
    const dir = tempDir('cloud-logging-')
    try {
      expect(loadConfig({ DATA_DIR: dir.path }).logFormat).toBe('auto')
      expect(loadConfig({ DATA_DIR: dir.path, LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty')
      const wrong = () => loadConfig({ DATA_DIR: dir.path, LOG_FORMAT: 'colour' })
      expect(wrong).toThrow(ConfigError)
      expect(wrong).toThrow('LOG_FORMAT: must be one of auto, json, pretty (got "colour")')
    } finally {
      dir.remove()
    }
  })
})

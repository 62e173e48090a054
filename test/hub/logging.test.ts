import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createHubLogger } from '../../hub/logging.ts'

function output(isTTY: boolean) {
  const lines: string[] = []
  return { isTTY, lines, write: (line: string) => lines.push(line) }
}

const ESC = '\u001b['

function logOneEvent(env: NodeJS.ProcessEnv, isTTY: boolean) {
  const out = output(isTTY)
  createHubLogger(env, out)
    .child({ printer: 'socket-10.0.0.5-9100' })
    .info({ print_job_id: 'job-1', credential: 'hub_secret' }, 'print job printing')
  return out.lines
}

describe('hub logger', () => {
  it('writes one pretty, coloured line per event when stdout is a terminal', () => {
    const lines = logOneEvent({}, true)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(ESC)
    const plain = stripVTControlCharacters(lines[0]!)
    expect(plain).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO: print job printing /)
    expect(plain).toContain('"printer":"socket-10.0.0.5-9100","print_job_id":"job-1"')
    expect(plain).toContain('"credential":"[Redacted]"')
    expect(plain.indexOf('\n')).toBe(plain.length - 1)
  })

  it('writes one JSON object per line when stdout is not a terminal', () => {
    const [line] = logOneEvent({}, false)
    expect(JSON.parse(line!)).toMatchObject({
      level: 30,
      msg: 'print job printing',
      printer: 'socket-10.0.0.5-9100',
      credential: '[Redacted]',
    })
  })

  it('LOG_FORMAT forces either format; LOG_LEVEL filters', () => {
    expect(logOneEvent({ LOG_FORMAT: 'pretty' }, false)[0]).toMatch(/ INFO: print job printing /)
    expect(JSON.parse(logOneEvent({ LOG_FORMAT: 'json' }, true)[0]!)).toMatchObject({
      msg: 'print job printing',
    })
    expect(logOneEvent({ LOG_LEVEL: 'warn' }, false)).toEqual([])
  })

  it('names LOG_FORMAT or LOG_LEVEL when it is wrong', () => {
    expect(() => createHubLogger({ LOG_FORMAT: 'colour' })).toThrow(
      'LOG_FORMAT must be one of auto, json, pretty (got "colour")',
    )
    expect(() => createHubLogger({ LOG_LEVEL: 'loud' })).toThrow('LOG_LEVEL must be one of')
  })
})

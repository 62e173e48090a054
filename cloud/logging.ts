import { type DestinationStream, type Logger, pino } from 'pino'
import { prettyFactory } from 'pino-pretty'

/** `auto`: pretty, coloured lines when stdout is a terminal, one JSON object per line otherwise. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export interface LogSettings {
  logLevel: string
  logFormat: LogFormat
}

/** Where log lines go: stdout, or a stream a test holds (with `isTTY` as a terminal would set it). */
export interface LogOutput {
  write(line: string): unknown
  isTTY?: boolean
}

/** Paths pino replaces with "[Redacted]" on every line, whatever the format. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'client_secret',
  'access_token',
  'token',
  'credential',
]

/**
 * The cloud's logger: JSON for machines, or one readable line per event for a person at a terminal.
 *
 * JSON lines to stdout are written asynchronously: the lines logged while a write is under way go out
 * together in the next one, and pino writes what is left synchronously when the process exits. A line per
 * write cost a system call each, five or six a job (docs/performance.md, "CPU per job on the cluster"); a
 * kill -9 can now lose the lines of the last write or so, never anything the cloud acknowledged.
 */
export function createLogger(settings: LogSettings, output: LogOutput = process.stdout): Logger {
  const options = { level: settings.logLevel, redact: REDACT }
  const pretty = settings.logFormat === 'pretty' || (settings.logFormat === 'auto' && output.isTTY === true)
  if (pretty) return pino(options, prettyLines(output))
  return pino(options, output === process.stdout ? pino.destination({ dest: 1, sync: false }) : output)
}

/**
 * pino-pretty's formatter applied as each line is written (its transport stream would format later, and lose
 * the last lines when the process exits). Colours only on a terminal.
 */
function prettyLines(output: LogOutput): DestinationStream {
  const format = prettyFactory({
    colorize: output.isTTY === true,
    translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  })
  return { write: (line: string) => output.write(format(line)) }
}

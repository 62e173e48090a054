import { type DestinationStream, type Logger, pino } from 'pino'
import { prettyFactory } from 'pino-pretty'

/** Where log lines go: stdout, or a stream a test holds (with `isTTY` as a terminal would set it). */
export interface LogOutput {
  write(line: string): unknown
  isTTY?: boolean
}

const FORMATS = ['auto', 'json', 'pretty']
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/**
 * The hub's logger, from LOG_LEVEL (info) and LOG_FORMAT: `auto` (the default) writes pretty, coloured
 * lines when stdout is a terminal and one JSON object per line otherwise; `json` or `pretty` force one.
 * A bad value throws an Error naming the variable.
 */
export function createHubLogger(env: NodeJS.ProcessEnv, output: LogOutput = process.stdout): Logger {
  const level = env.LOG_LEVEL || 'info'
  const format = env.LOG_FORMAT || 'auto'
  if (!LEVELS.includes(level))
    throw new Error(`LOG_LEVEL must be one of ${LEVELS.join(', ')} (got "${level}")`)
  if (!FORMATS.includes(format))
    throw new Error(`LOG_FORMAT must be one of ${FORMATS.join(', ')} (got "${format}")`)
  const options = { level, redact: ['credential'] }
  if (format === 'pretty' || (format === 'auto' && output.isTTY === true))
    return pino(options, prettyLines(output))
  return pino(options, output === process.stdout ? pino.destination({ dest: 1, sync: true }) : output)
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

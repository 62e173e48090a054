/**
 * Runs one simulated printer until interrupted (used by `npm run demo`):
 *
 *   tsx test/simulators/cli.ts --language zpl [--port 9101] [--name Labels] [--no-status]
 *                              [--paper-out] [--cover-open] [--paper-low]
 *
 * stdout: one JSON line once it listens, `{"uri":...,"host":...,"port":...,"language":...}`.
 * stderr: one JSON line per batch of print data received (`bytes`, `total`).
 */
import { parseArgs } from 'node:util'
import { RAW_LANGUAGES, type RawLanguage } from '../../protocol/enums.ts'
import { startPrinterSimulator } from './printer-simulator.ts'

function fail(message: string): never {
  process.stderr.write(`printer simulator: ${message}\n`)
  process.exit(2)
}

const { values } = parseArgs({
  options: {
    language: { type: 'string' },
    port: { type: 'string', default: '0' },
    name: { type: 'string' },
    'no-status': { type: 'boolean', default: false },
    'paper-out': { type: 'boolean', default: false },
    'cover-open': { type: 'boolean', default: false },
    'paper-low': { type: 'boolean', default: false },
  },
  strict: true,
})

const language = values.language as RawLanguage | undefined
if (!language || !RAW_LANGUAGES.includes(language))
  fail(`--language must be one of ${RAW_LANGUAGES.join(', ')}`)
const port = Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) fail('--port must be an integer from 0 to 65535')

const simulator = await startPrinterSimulator({
  language,
  port,
  answersStatus: !values['no-status'],
  ...(values.name === undefined ? {} : { name: values.name }),
})
simulator.setCondition({
  paperOut: values['paper-out'],
  coverOpen: values['cover-open'],
  paperLow: values['paper-low'],
})

const log = (event: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(event)}\n`)
let total = 0
simulator.onData((bytes) => {
  total += bytes.length
  log({ event: 'received', bytes: bytes.length, total })
})

process.stdout.write(
  `${JSON.stringify({ uri: simulator.uri, host: simulator.host, port: simulator.port, language })}\n`,
)

const stop = () => {
  void simulator.close().then(() => process.exit(0))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)

import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { waitForLogLine } from './cli.ts'

function node(script: string) {
  return spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
}

describe('waitForLogLine', () => {
  it('resolves with the first JSON line that matches', async () => {
    const child = node(
      `console.log('starting'); console.log(JSON.stringify({ msg: 'a' })); console.log(JSON.stringify({ msg: 'ready', n: 1 }))`,
    )
    await expect(waitForLogLine(child, (line) => line.msg === 'ready')).resolves.toEqual({
      msg: 'ready',
      n: 1,
    })
  })

  it('shows what the process wrote on stdout and stderr when it exits first', async () => {
    const child = node(
      `console.log(JSON.stringify({ msg: 'starting' })); console.error('cloud: PORT: 127.0.0.1:1 is already in use'); process.exit(1)`,
    )
    await expect(waitForLogLine(child, (line) => line.msg === 'ready')).rejects.toThrow(
      'the process exited with 1 before a matching log line; its last lines:\n  {"msg":"starting"}\nand on stderr:\n  cloud: PORT: 127.0.0.1:1 is already in use',
    )
  })

  it('says (none) when the process wrote nothing', async () => {
    const child = node('process.exit(3)')
    await expect(waitForLogLine(child, () => true)).rejects.toThrow(
      /^the process exited with 3 before a matching log line; its last lines:\n {2}\(none\)$/,
    )
  })
})

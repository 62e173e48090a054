import { describe, expect, it } from 'vitest'
import { SETTINGS } from '../../cloud/config.ts'
import { cloudCli, runCli } from '../helpers/cli.ts'

describe('the programs explain themselves', () => {
  it('cloud --help and cloud help serve list every command and every setting of cloud/config.ts', async () => {
    const general = await cloudCli(['--help'], {})
    expect(general.status).toBe(0)
    for (const command of ['serve', 'account list', 'printer remove', 'job list', 'enrollment create'])
      expect(general.stdout).toContain(`  ${command} `)
    const serve = await cloudCli(['help', 'serve'], {})
    expect(serve.stdout.split('\n')[0]).toBe('usage: cloud serve')
    for (const setting of Object.values(SETTINGS))
      expect(serve.stdout).toMatch(new RegExp(`^  ${setting.env} +\\S`, 'm'))
  })

  it('each cloud command has its own help: its options and the variables it reads', async () => {
    const result = await cloudCli(['client', 'create', '--help'], {})
    expect(result.status).toBe(0)
    const lines = result.stdout.split('\n')
    expect(lines[0]).toMatch(/^usage: cloud client create --account ACCOUNT_ID --scopes /)
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}--scopes A,B +what its tokens may do: /))
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}DATA_DIR +SQLite database and documents/))
    expect(lines).not.toContainEqual(expect.stringMatching(/^ {2}PORT /))
  })

  it('hub run --help lists its options, variables and every printer URI form', () => {
    const result = runCli('hub/cli.ts', ['run', '--help'], {})
    expect(result.status).toBe(0)
    for (const text of [
      '  --cloud URL ',
      '  --printer URI ',
      '  HUB_CLOUD_RETRY_MAX_MS ',
      '  socket://HOST[:PORT] ',
      '  serial:/dev/ttyUSB0 ',
      'flow=none|rtscts|xonxoff',
      '  usblp:/dev/usb/lp0 ',
      '  usb://VID:PID[/SERIAL] ',
      'language=escpos|zpl|tspl|cpcl',
    ])
      expect(result.stdout).toContain(text)
    expect(runCli('hub/cli.ts', ['run', '--nmae'], {}).stderr.split('\n')[0]).toBe(
      'hub: unknown option --nmae',
    )
  })

  it('ota --help lists its commands; a missing option is a usage error (exit 2)', () => {
    const help = runCli('ota/cli.ts', ['--help'], {})
    expect(help.status).toBe(0)
    expect(help.stdout.split('\n')[0]).toBe(
      'usage: ota build --version X.Y.Z --out DIR [--arch ARCH[,ARCH…]]',
    )
    const usage = runCli('ota/cli.ts', ['build', '--version', '1.0.0'], {})
    expect(usage).toMatchObject({ status: 2, stdout: '' })
    expect(usage.stderr.split('\n')[0]).toBe('ota: --out is required')
  })
})

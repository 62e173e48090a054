import { describe, expect, it } from 'vitest'
import { help, hubCommand, runHelp, usage } from '../../hub/cli/usage.ts'
import { runCli } from '../helpers/cli.ts'

// Help and errors name the command a person types: `print-hub` on an installed hub (its launcher,
// packaging/print-hub.sh, sets PRINT_HUB_INSTALL_ROOT), `npm run -s hub -- …` in a checkout.

const INSTALLED = { PRINT_HUB_INSTALL_ROOT: '/opt/print-hub' }
const CHECKOUT = { PRINT_HUB_INSTALL_ROOT: '' }

describe('hub CLI: the command in help and errors', () => {
  it('is print-hub when the launcher started the hub, hub in a checkout', () => {
    expect(hubCommand(INSTALLED)).toBe('print-hub')
    expect(hubCommand(CHECKOUT)).toBe('hub')
    expect(hubCommand({})).toBe('hub')
  })

  it('installed: every usage line names print-hub, and nothing names npm', () => {
    for (const text of [help('print-hub'), runHelp('print-hub'), usage('print-hub')]) {
      expect(text).not.toMatch(/npm|(?<!print-)\bhub (run|help|COMMAND)/)
      for (const line of text.split('\n').filter((l) => l.startsWith('usage:')))
        expect(line).toMatch(/^usage: print-hub /)
    }
  })

  it('installed: print-hub --help and a usage error', () => {
    const helped = runCli('hub/cli.ts', ['--help'], INSTALLED)
    expect(helped.status).toBe(0)
    expect(helped.stdout.split('\n')[0]).toBe('usage: print-hub COMMAND [OPTIONS]')
    expect(helped.stdout).toContain('run the hub (print-hub run --help for its options)')
    expect(helped.stdout).not.toContain('npm')
    const wrong = runCli('hub/cli.ts', ['frobnicate'], INSTALLED)
    expect(wrong.status).toBe(2)
    expect(wrong.stderr.split('\n').slice(0, 3)).toEqual([
      'print-hub: unknown command: frobnicate',
      'usage: print-hub run --cloud URL --data DIR [--enroll TOKEN] [--printer URI]...',
      '       print-hub help, print-hub run --help',
    ])
  })

  it('in a checkout: the npm form in the help, hub in errors', () => {
    const helped = runCli('hub/cli.ts', ['help'], CHECKOUT)
    expect(helped.stdout.split('\n')[0]).toBe(
      'usage: hub COMMAND [OPTIONS]   (npm run -s hub -- COMMAND ...)',
    )
    const wrong = runCli('hub/cli.ts', ['run', '--bogus'], CHECKOUT)
    expect(wrong.status).toBe(2)
    expect(wrong.stderr.split('\n')[0]).toBe('hub: unknown option --bogus')
  })
})

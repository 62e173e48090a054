import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.ts'

/** `ota image`'s usage errors: exit code 2 and one line naming what is wrong, before anything is built. */
describe('ota image usage', () => {
  const base = [
    'image',
    '--version',
    '1.2.3',
    '--cloud',
    'https://print.example.com',
    '--out',
    '/nonexistent/out',
  ]
  const without = (flag: string) => {
    const args = [...base]
    args.splice(args.indexOf(flag), 2)
    return args
  }

  it.each([
    ['no --cloud', without('--cloud'), /--cloud is required/],
    ['a bad version', [...without('--version'), '--version', '1.2'], /the version must be X\.Y\.Z/],
    ['a cloud that is not a URL', [...without('--cloud'), '--cloud', 'print.example.com'], /--cloud must be/],
    ['an architecture with no image', [...base, '--arch', 'armhf'], /images are made for arm64/],
  ])('refuses %s', (_, args, message) => {
    const result = runCli('ota/cli.ts', args, {})
    expect(result.status).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(message)
    expect(result.stderr).toContain('usage: ota build|image|publish|withdraw|resign|keygen')
  })

  it('describes the command in --help', () => {
    const result = runCli('ota/cli.ts', ['--help'], {})
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(
      'ota image --version X.Y.Z --cloud URL --out DIR [--arch arm64] [--from DIR]',
    )
    expect(result.stdout).toContain('docs/appliance.md')
  })
})

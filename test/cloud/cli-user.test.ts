import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cloudCli } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { consoleSession } from './console/console-harness.ts'
import { startTestCloud } from './test-cloud.ts'

describe('cloud user create', () => {
  const dirs: { remove(): void }[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })
  const newDataDir = () => {
    const dir = tempDir('cloud-cli-user-')
    dirs.push(dir)
    return dir.path
  }
  const env = (DATA_DIR: string) => ({ DATA_DIR, PUBLIC_URL: 'http://127.0.0.1:8080' })

  it('prints {user_id, set_password_url}; the link sets the password the user then signs in with', async () => {
    const DATA_DIR = newDataDir()
    const { account_id } = JSON.parse(
      (await cloudCli(['account', 'create', '--name', 'Shop'], env(DATA_DIR))).stdout,
    )
    const created = await cloudCli(
      ['user', 'create', '--account', account_id, '--email', 'Owner@Shop.example', '--role', 'owner'],
      env(DATA_DIR),
    )
    expect(created).toMatchObject({ status: 0, stderr: '' })
    expect(created.stdout.endsWith('\n')).toBe(true)
    const output = JSON.parse(created.stdout)
    expect(output).toStrictEqual({
      user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      set_password_url: expect.stringMatching(
        /^http:\/\/127\.0\.0\.1:8080\/console\/set-password\/spw_[\w-]{43}$/,
      ),
    })
    const token = output.set_password_url.split('/').at(-1)
    expect(readFileSync(path.join(DATA_DIR, 'cloud.sqlite')).includes(Buffer.from(token))).toBe(false)

    const cloud = await startTestCloud({ dataDir: DATA_DIR })
    try {
      const person = consoleSession(cloud)
      const passphrase = 'opening the shop at nine'
      const set = await person.post(`/console/set-password/${token}`, {
        password: passphrase,
        confirmation: passphrase,
      })
      expect(set.statusCode).toBe(303)
      const signedIn = await person.post('/console/sign-in', {
        email: 'owner@shop.example',
        password: passphrase,
      })
      expect(signedIn.statusCode).toBe(303)
      expect((await person.get('/console/users')).body).toContain('owner@shop.example')
    } finally {
      await cloud.close()
    }
  })

  it('an unknown account or a taken e-mail: one line on stderr, exit 1; a bad role or e-mail: usage, exit 2', async () => {
    const DATA_DIR = newDataDir()
    const { account_id } = JSON.parse(
      (await cloudCli(['account', 'create', '--name', 'Shop'], env(DATA_DIR))).stdout,
    )
    const create = (...args: string[]) => cloudCli(['user', 'create', ...args], env(DATA_DIR))
    expect(
      await create('--account', 'no-such-account', '--email', 'a@b.example', '--role', 'member'),
    ).toStrictEqual({
      status: 1,
      stdout: '',
      stderr: 'cloud: no account no-such-account\n',
    })
    expect((await create('--account', account_id, '--email', 'a@b.example', '--role', 'member')).status).toBe(
      0,
    )
    expect(await create('--account', account_id, '--email', 'A@B.example', '--role', 'owner')).toStrictEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: account ${account_id} has a user with e-mail A@B.example already\n`,
    })
    const badRole = await create('--account', account_id, '--email', 'c@b.example', '--role', 'admin')
    expect(badRole.status).toBe(2)
    expect(badRole.stderr.split('\n')[0]).toBe('cloud: --role must be one of owner, member')
    const badEmail = await create('--account', account_id, '--email', 'not an address', '--role', 'member')
    expect(badEmail.status).toBe(2)
    expect(badEmail.stderr.split('\n')[0]).toBe('cloud: --email not an address is not an e-mail address')
    expect((await create('--account', account_id, '--role', 'member')).stderr.split('\n')[0]).toBe(
      'cloud: --email is required',
    )
  })
})

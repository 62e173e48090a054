import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { importPKCS8, SignJWT } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { cloudCli } from '../../helpers/cli.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { bearer } from '../api/api-helpers.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const PUBLIC_URL = 'http://127.0.0.1:8080'

describe('cloud CLI: app create, app key add, app install (issue 10 point 1)', () => {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it('registers an application and its keys, installs it, and the cloud then accepts its assertions', async () => {
    const dir = tempDir('cloud-cli-app-')
    cleanups.push(() => dir.remove())
    const DATA_DIR = path.join(dir.path, 'data')
    const env = { DATA_DIR, PUBLIC_URL }
    const cli = (...args: string[]) => cloudCli(args, env)
    const json = (result: Awaited<ReturnType<typeof cli>>) => {
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout.trim().split('\n')).toHaveLength(1)
      return JSON.parse(result.stdout)
    }

    const first = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const pemFile = path.join(dir.path, 'first.pub.pem')
    writeFileSync(pemFile, first.publicKey.export({ type: 'spki', format: 'pem' }))
    const second = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const jwkFile = path.join(dir.path, 'second.jwk')
    writeFileSync(jwkFile, JSON.stringify({ ...second.publicKey.export({ format: 'jwk' }), kid: 'rotated' }))
    const privateFile = path.join(dir.path, 'first.pem')
    writeFileSync(privateFile, first.privateKey.export({ type: 'pkcs8', format: 'pem' }))

    const account = json(await cli('account', 'create', '--name', 'Corner shop'))
    const created = json(await cli('app', 'create', '--name', 'Back office', '--public-key', pemFile))
    expect(created).toStrictEqual({
      app_id: expect.stringMatching(UUID),
      name: 'Back office',
      partner: false,
      created_at: expect.any(String),
      kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
    expect(
      json(await cli('app', 'key', 'add', '--app', created.app_id, '--public-key', jwkFile)),
    ).toStrictEqual({
      app_id: created.app_id,
      kid: 'rotated',
      keys: [created.kid, 'rotated'],
    })
    const again = await cli('app', 'key', 'add', '--app', created.app_id, '--public-key', jwkFile)
    expect(again.status).toBe(1)
    expect(again.stderr).toBe(`cloud: application ${created.app_id} already has a key with kid rotated\n`)

    const installed = json(
      await cli(
        'app',
        'install',
        '--app',
        created.app_id,
        '--account',
        account.account_id,
        '--permissions',
        'printers:read',
      ),
    )
    expect(installed).toStrictEqual({
      installation_id: expect.stringMatching(UUID),
      app_id: created.app_id,
      account_id: account.account_id,
      permissions: ['printers:read'],
      active: true,
      created_at: expect.any(String),
    })
    const twice = await cli(
      'app',
      'install',
      '--app',
      created.app_id,
      '--account',
      account.account_id,
      '--permissions',
      'printers:read',
    )
    expect(twice.status).toBe(1)
    expect(twice.stderr).toContain(`installation ${installed.installation_id}`)

    const partner = json(
      await cli('app', 'create', '--name', 'POS vendor', '--public-key', pemFile, '--partner'),
    )
    expect(partner.partner).toBe(true)
    const partnerInstall = await cli(
      'app',
      'install',
      '--app',
      partner.app_id,
      '--account',
      account.account_id,
      '--permissions',
      'printers:read',
    )
    expect(partnerInstall.status).toBe(1)
    expect(partnerInstall.stderr).toContain('is a partner application')

    // Wrong command lines: exit 2 with one line saying why.
    const refusedKey = await cli('app', 'create', '--name', 'X', '--public-key', privateFile)
    expect(refusedKey.status).toBe(2)
    expect(refusedKey.stderr.split('\n')[0]).toBe(
      `cloud: --public-key ${privateFile}: the file holds a private key; give the public key only`,
    )
    const unknownPermission = await cli(
      'app',
      'install',
      '--app',
      created.app_id,
      '--account',
      account.account_id,
      '--permissions',
      'root',
    )
    expect(unknownPermission.status).toBe(2)
    expect(unknownPermission.stderr.split('\n')[0]).toContain('unknown permission root')
    // The cloud on the same DATA_DIR takes an assertion signed with the registered key.
    const cloud: TestCloud = await startTestCloud({ dataDir: DATA_DIR, env: { PUBLIC_URL } })
    cleanups.push(() => cloud.close())
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({ jti: 'cli-1' })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(created.app_id)
      .setAudience(PUBLIC_URL)
      .setIssuedAt(now)
      .setExpirationTime(now + 120)
      .sign(await importPKCS8(first.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256'))
    const res = await cloud.app.inject({
      method: 'POST',
      url: `/developer-api/v1/app-installations/${installed.installation_id}/access-tokens`,
      headers: bearer(assertion),
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ permissions: ['printers:read'], account_id: account.account_id })
  }, 120_000)
})

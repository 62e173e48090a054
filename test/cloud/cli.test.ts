import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { cloudCli, exitOf, runCli, spawnCli, waitForLogLine } from '../helpers/cli.ts'
import { makePdf } from '../helpers/pdf.ts'
import { tempDir } from '../helpers/temp-dir.ts'

describe('cloud CLI', () => {
  const dirs: { remove(): void }[] = []
  const newDataDir = () => {
    const dir = tempDir('cloud-cli-')
    dirs.push(dir)
    return dir.path
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })

  it('creates an account and a client, printing one JSON object each; the secret is stored only hashed', async () => {
    const DATA_DIR = newDataDir()
    const account = await cloudCli(['account', 'create', '--name', 'Corner Bakery'], { DATA_DIR })
    expect(account.status).toBe(0)
    const { account_id, name } = JSON.parse(account.stdout)
    expect(name).toBe('Corner Bakery')
    const client = await cloudCli(
      ['client', 'create', '--account', account_id, '--scopes', 'print_jobs:write,print_jobs:read'],
      { DATA_DIR },
    )
    expect(client.status).toBe(0)
    expect(client.stdout.trim().split('\n')).toHaveLength(1)
    const created = JSON.parse(client.stdout)
    expect(created).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_secret: expect.stringMatching(/^cs_[A-Za-z0-9_-]{43}$/),
      account_id,
      name: null,
      scopes: ['print_jobs:write', 'print_jobs:read'],
    })
    const db = new Database(path.join(DATA_DIR, 'cloud.sqlite'), { readonly: true })
    const row = db
      .prepare('SELECT secret_hash FROM api_clients WHERE client_id = ?')
      .get(created.client_id) as {
      secret_hash: Buffer
    }
    db.close()
    expect(row.secret_hash).toHaveLength(32)
    const file = readFileSync(path.join(DATA_DIR, 'cloud.sqlite'))
    expect(file.includes(Buffer.from(created.client_secret))).toBe(false)
  })

  it('client revoke and hub revoke of an unknown id: one line on stderr, exit code 1', async () => {
    const DATA_DIR = newDataDir()
    for (const what of ['client', 'hub']) {
      const result = runCli('cloud/cli.ts', [what, 'revoke', '--id', 'no-such-id'], { DATA_DIR })
      expect(result.status).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toBe(`cloud: no ${what} no-such-id\n`)
    }
  })

  it('client create --name: the name is kept and listed; an empty or 101-character name is a usage error', async () => {
    const DATA_DIR = newDataDir()
    const { account_id } = JSON.parse(
      (await cloudCli(['account', 'create', '--name', 'Shop'], { DATA_DIR })).stdout,
    )
    const create = async (name: string) =>
      await cloudCli(
        ['client', 'create', '--account', account_id, '--scopes', 'printers:read', '--name', name],
        { DATA_DIR },
      )
    expect(JSON.parse((await create('Till app')).stdout)).toMatchObject({
      name: 'Till app',
      scopes: ['printers:read'],
    })
    for (const name of ['', 'x'.repeat(101)]) {
      const refused = await create(name)
      expect(refused.status).toBe(2)
      expect(refused.stderr.split('\n')[0]).toBe('cloud: --name must be 1 to 100 characters, without NUL')
    }
    const list = await cloudCli(['client', 'list', '--account', account_id], { DATA_DIR })
    expect(JSON.parse(list.stdout).clients.map((c: { name: string }) => c.name)).toEqual(['Till app'])
  })

  it('enrollment create --name: 1 to 200 characters, as the partner API and the console take', async () => {
    const DATA_DIR = newDataDir()
    const { account_id } = JSON.parse(
      (await cloudCli(['account', 'create', '--name', 'Shop'], { DATA_DIR })).stdout,
    )
    const create = async (name: string) =>
      await cloudCli(['enrollment', 'create', '--account', account_id, '--name', name], { DATA_DIR })
    expect((await create('x'.repeat(200))).status).toBe(0)
    const refused = await create('x'.repeat(201))
    expect(refused.status).toBe(2)
    expect(refused.stderr.split('\n')[0]).toBe('cloud: --name must be 1 to 200 characters, without NUL')
  })

  it('refuses unknown scopes and unknown accounts with a usage message and exit code 2', async () => {
    const DATA_DIR = newDataDir()
    const bad = runCli('cloud/cli.ts', ['client', 'create', '--account', 'x', '--scopes', 'admin'], {
      DATA_DIR,
    })
    expect(bad.status).toBe(2)
    expect(bad.stderr.split('\n')[0]).toBe(
      'cloud: unknown scope admin; known: printers:read, documents:write, print_jobs:write, print_jobs:read, webhooks:write',
    )
    const missing = runCli(
      'cloud/cli.ts',
      ['client', 'create', '--account', 'x', '--scopes', 'print_jobs:read'],
      {
        DATA_DIR,
      },
    )
    expect(missing.status).toBe(2)
    expect(missing.stderr.split('\n')[0]).toBe('cloud: no account x')
  })

  it.each([
    [{ PORT: 'http' }, 'cloud: bad configuration: PORT: must be a port number from 0 to 65535 (got "http")'],
    [
      { MQTT_PORT: '99999' },
      'cloud: bad configuration: MQTT_PORT: must be a port number from 0 to 65535 (got "99999")',
    ],
  ])('stops start-up on bad configuration %j with one line naming it', (env, message) => {
    const result = runCli('cloud/cli.ts', ['serve'], { DATA_DIR: newDataDir(), ...env })
    expect(result.status).toBe(1)
    expect(result.stderr).toBe(`${message}\n`)
  })

  it('stops start-up when DATA_DIR cannot be written', async () => {
    const file = path.join(newDataDir(), 'plain-file')
    writeFileSync(file, '')
    const result = runCli('cloud/cli.ts', ['serve'], { DATA_DIR: file })
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(
      /^cloud: bad configuration: DATA_DIR: .* is not a writable directory \(EEXIST\)\n$/,
    )
  })

  it('serves the API and the broker, and on SIGTERM finishes in-flight requests and closes the database', async () => {
    const DATA_DIR = newDataDir()
    const { account_id } = JSON.parse(
      (await cloudCli(['account', 'create', '--name', 'Shop'], { DATA_DIR })).stdout,
    )
    const { client_id, client_secret } = JSON.parse(
      (
        await cloudCli(['client', 'create', '--account', account_id, '--scopes', 'documents:write'], {
          DATA_DIR,
        })
      ).stdout,
    )
    const server = spawnCli('cloud/cli.ts', ['serve'], {
      DATA_DIR,
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_PORT: '0',
    })
    try {
      const ready = await waitForLogLine(server, (line) => line.msg === 'cloud ready')
      expect(ready).toMatchObject({ data_dir: DATA_DIR, database: path.join(DATA_DIR, 'cloud.sqlite') })
      expect(String(ready.mqtt)).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/)
      const api = String(ready.api)
      const tokenRes = await fetch(`${api}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret }),
      })
      expect(tokenRes.status).toBe(200)
      const { access_token } = (await tokenRes.json()) as { access_token: string }

      // An upload whose body is still arriving when SIGTERM comes must still be answered.
      const boundary = 'b0undary'
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n`
      const tail = `\r\n--${boundary}--\r\n`
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${api}/api/v1/documents`,
          {
            method: 'POST',
            headers: {
              authorization: `Bearer ${access_token}`,
              'content-type': `multipart/form-data; boundary=${boundary}`,
            },
          },
          (res) => {
            let body = ''
            res.on('data', (c) => {
              body += c
            })
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
          },
        )
        req.on('error', reject)
        req.write(head)
        setTimeout(() => {
          server.kill('SIGTERM')
          setTimeout(() => req.end(Buffer.concat([makePdf(1), Buffer.from(tail)])), 300)
        }, 300)
      })
      const { status, body } = await answer
      expect(status).toBe(201)
      expect(JSON.parse(body).document_format).toBe('pdf')
      expect(await exitOf(server)).toBe(0)
      expect(existsSync(path.join(DATA_DIR, 'cloud.sqlite-wal'))).toBe(false)
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL')
    }
  })
})

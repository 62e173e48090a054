import { execFile } from 'node:child_process'
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BOOT_TEST_RECORD } from '../../ota/appliance-record.ts'
import type { Catalog } from '../../ota/catalog.ts'
import { writeReleaseKey } from '../../ota/release-key.ts'
import { ROOT, runCli } from '../helpers/cli.ts'
import { type FakeInstaller, writeFakeBuild } from '../helpers/fake-release.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { listen } from './api/api-helpers.ts'
import { startTestCloud, type TestCloud } from './test-cloud.ts'

// GET /agent-download-api/v1/releases and /installers/{filename} (spec: Agent downloads) on a cloud whose
// DATA_DIR holds releases published with `ota publish`, from build directories made here (release.json and
// installer files of random bytes: the routes do not care what an installer holds; test/ota/package.test.ts
// publishes real ones).

const RELEASES = '/agent-download-api/v1/releases'
const INSTALLERS = '/agent-download-api/v1/installers'

let work: ReturnType<typeof tempDir>
let dataDir: string
let keyFile: string
let publicKeyFile: string
let cloud: TestCloud
let base: string
const files = new Map<string, Buffer>()

/** A build directory with one .deb and one tarball per architecture (test/helpers/fake-release.ts). */
function fakeBuild(version: string, installers: FakeInstaller[]): string {
  const dir = path.join(work.path, `build-${version}-${installers.map((i) => i.arch).join('-')}`)
  return writeFakeBuild(dir, version, installers, files)
}

function ota(args: string[], env: Record<string, string> = {}) {
  return runCli('ota/cli.ts', args, { DATA_DIR: dataDir, OTA_SIGNING_KEY: keyFile, ...env })
}

function publish(dir: string, notes: string) {
  const result = ota(['publish', '--from', dir, '--notes', notes])
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return JSON.parse(result.stdout) as { version: string; releases: string[]; key_id: string }
}

/** The status line and headers of a GET of `target` exactly as written, on a fresh connection. */
function rawGet(target: string): Promise<string> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`)
    })
    let received = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      received += chunk
    })
    socket.on('end', () => resolve(received.split('\r\n\r\n')[0] ?? ''))
    socket.on('error', reject)
  })
}

const get = (url: string, headers: Record<string, string> = {}) =>
  cloud.app.inject({ method: 'GET', url, headers })

async function expectUnavailable(url: string) {
  const res = await get(url)
  expect(res.statusCode).toBe(503)
  expect(res.headers['retry-after']).toMatch(/^\d+$/)
  expect(res.json()).toStrictEqual({
    error: 'service_unavailable',
    error_code: 'release_catalog_unavailable',
    message: expect.any(String),
  })
}

beforeAll(async () => {
  work = tempDir('agent-downloads-')
  dataDir = path.join(work.path, 'data')
  mkdirSync(dataDir)
  const keygen = runCli('ota/cli.ts', ['keygen', '--out', path.join(work.path, 'keys')], {})
  expect(keygen.status).toBe(0)
  const keys = JSON.parse(keygen.stdout) as { private_key_file: string; public_key_file: string }
  keyFile = keys.private_key_file
  publicKeyFile = keys.public_key_file
  cloud = await startTestCloud({ dataDir })
  base = await listen(cloud.app)
})
afterAll(async () => {
  await cloud?.close()
  work?.remove()
})

describe('before any release is published', () => {
  it('the catalog and every installer answer 503 release_catalog_unavailable', async () => {
    await expectUnavailable(RELEASES)
    await expectUnavailable(`${INSTALLERS}/print-hub_1.0.0_amd64.deb`)
  })
})

describe('ota publish', () => {
  it('refuses a release key inside DATA_DIR, and a directory ota build did not write', () => {
    const inside = path.join(dataDir, 'release-key.pem')
    writeFileSync(inside, readFileSync(keyFile))
    const refused = ota(['publish', '--from', work.path], { OTA_SIGNING_KEY: inside })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain('must not lie inside DATA_DIR')
    const notBuilt = ota(['publish', '--from', work.path])
    expect(notBuilt.status).toBe(1)
    expect(notBuilt.stderr).toContain('release.json')
  })

  it('adds releases and makes the newest published current; a second architecture joins its version', () => {
    expect(publish(fakeBuild('1.0.0', [{ arch: 'amd64', size: 40_000 }]), 'First').releases).toEqual([
      '1.0.0',
    ])
    const second = publish(fakeBuild('1.1.0', [{ arch: 'amd64', size: 300_000 }]), 'Faster start-up')
    expect(second).toMatchObject({ version: '1.1.0', releases: ['1.1.0', '1.0.0'] })
    // An arm64 package goes out only with a passing boot test of the card image made from it, for its bytes.
    const armBuild = fakeBuild('1.1.0', [{ arch: 'arm64', size: 50_000 }])
    const untested = ota(['publish', '--from', armBuild, '--notes', 'Faster start-up'])
    expect(untested.status).toBe(1)
    expect(untested.stderr).toContain('print-hub_1.1.0_arm64.deb has not been boot-tested')
    const record = {
      version: '1.1.0',
      package_sha256: createHash('sha256').update(files.get('print-hub_1.1.0_arm64.deb')!).digest('hex'),
      image_raw_sha256: 'f'.repeat(64),
      passed_at: '2026-11-28T12:00:00.000Z',
      test: 'test/appliance/boot.test.ts',
    }
    writeFileSync(
      path.join(armBuild, BOOT_TEST_RECORD),
      JSON.stringify({ ...record, package_sha256: 'e'.repeat(64) }),
    )
    const otherBuild = ota(['publish', '--from', armBuild, '--notes', 'Faster start-up'])
    expect(otherBuild.status).toBe(1)
    expect(otherBuild.stderr).toContain('is for another build')
    expect(ota(['publish', '--from', armBuild, '--without-boot-test', ' ']).status).toBe(2)
    writeFileSync(path.join(armBuild, BOOT_TEST_RECORD), JSON.stringify(record))
    const arm = publish(armBuild, 'Faster start-up')
    expect(arm.releases).toEqual(['1.1.0', '1.0.0'])
  })

  it('refuses a file name already published with other bytes, and another release key', () => {
    const published = new Map(files)
    files.delete('print-hub_1.0.0_amd64.deb')
    files.delete('print-hub_1.0.0_linux-amd64.tar.gz')
    const conflicting = fakeBuild('1.0.0', [{ arch: 'amd64', size: 1000 }])
    for (const [name, bytes] of published) files.set(name, bytes)
    const conflict = ota(['publish', '--from', conflicting])
    expect(conflict.status).toBe(1)
    expect(conflict.stderr).toContain('already published with other bytes')
    const otherKey = writeReleaseKey(path.join(work.path, 'other-keys')).private_key_file
    const refused = ota(['publish', '--from', fakeBuild('1.2.0', [{ arch: 'amd64', size: 100 }])], {
      OTA_SIGNING_KEY: otherKey,
    })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain('signed by release key')
  })
})

describe('GET /agent-download-api/v1/releases', () => {
  it('serves the current release and every installer with platform, architecture, size and SHA-256', async () => {
    const res = await get(RELEASES)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['cache-control']).toBe('public, max-age=60')
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    const catalog = res.json() as Catalog
    expect(catalog.current).toMatchObject({ version: '1.1.0', notes: 'Faster start-up' })
    expect(Date.parse(catalog.current.released_at)).not.toBeNaN()
    expect(catalog.current.installers.map((i) => i.filename).sort()).toEqual([
      'print-hub_1.1.0_amd64.deb',
      'print-hub_1.1.0_arm64.deb',
      'print-hub_1.1.0_linux-amd64.tar.gz',
      'print-hub_1.1.0_linux-arm64.tar.gz',
    ])
    for (const installer of catalog.current.installers) {
      const bytes = files.get(installer.filename)!
      expect(installer).toStrictEqual({
        filename: installer.filename,
        platform: 'linux',
        architecture: installer.filename.includes('arm64') ? 'arm64' : 'amd64',
        format: installer.filename.endsWith('.deb') ? 'deb' : 'tar.gz',
        size_bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      })
    }
    expect(catalog.releases.map((r) => r.version)).toEqual(['1.1.0', '1.0.0'])
    expect(catalog.releases[1]).toMatchObject({ notes: 'First' })
  })

  it('is signed: X-Catalog-Signature verifies over the body with the release key (Node crypto)', async () => {
    const res = await get(RELEASES)
    const signature = Buffer.from(String(res.headers['x-catalog-signature']), 'base64')
    const key = createPublicKey(readFileSync(publicKeyFile))
    expect(verify(null, res.rawPayload, key, signature)).toBe(true)
    const tampered = Buffer.from(res.rawPayload)
    tampered[tampered.indexOf('1.1.0')] = '9'.charCodeAt(0)
    expect(verify(null, tampered, key, signature)).toBe(false)
    expect(res.headers['x-catalog-key-id']).toBe((res.json() as Catalog).key_id)
  })

  // Run without blocking: curl asks this process's server.
  it('verifies with the openssl commands of docs/releases.md, and those commands refuse a tampered catalog', async () => {
    const readme = readFileSync(path.join(ROOT, 'docs/releases.md'), 'utf8')
    const block = /<!-- catalog-verify[^>]*-->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBeDefined()
    const dir = path.join(work.path, 'by-hand')
    mkdirSync(dir)
    writeFileSync(path.join(dir, 'release-key.pem'), readFileSync(publicKeyFile))
    const { stdout } = await promisify(execFile)('sh', ['-e', '-c', block!], {
      cwd: dir,
      env: { ...process.env, CLOUD: base },
    })
    expect(stdout).toContain('Signature Verified Successfully')
    // The same check on a catalog changed after signing fails.
    const catalog = readFileSync(path.join(dir, 'catalog.json'), 'utf8')
    writeFileSync(path.join(dir, 'catalog.json'), catalog.replace('Faster start-up', 'Faster start-up!'))
    const lastLine = block!.trim().split('\n').pop()!
    await expect(promisify(execFile)('sh', ['-c', lastLine], { cwd: dir })).rejects.toMatchObject({
      stdout: expect.stringContaining('Signature Verification Failure'),
    })
  })

  it('answers 304 to If-None-Match with its ETag (also weak, or *), and 200 to another tag', async () => {
    const { etag } = (await get(RELEASES)).headers
    for (const tag of [String(etag), `W/${etag}`, '*', `"other", ${etag}`]) {
      const res = await get(RELEASES, { 'if-none-match': tag })
      expect(res.statusCode, tag).toBe(304)
      expect(res.body).toBe('')
      expect(res.headers.etag).toBe(etag)
      expect(res.headers['cache-control']).toBe('public, max-age=60')
    }
    expect((await get(RELEASES, { 'if-none-match': '"other"' })).statusCode).toBe(200)
  })

  it('answers 503 for a catalog changed after signing or a wrong signature, and serves it again once restored', async () => {
    const file = path.join(dataDir, 'releases', 'catalog.json')
    const original = readFileSync(file, 'utf8')
    const stored = JSON.parse(original) as { text: string; signature: string }
    // The first digit of a checksum, changed (to 1 where it is 0: a fixed digit left 1 in 16 catalogs as they were).
    const tampered = stored.text.replace(
      /"sha256": "([0-9a-f])/,
      (_, digit) => `"sha256": "${digit === '0' ? '1' : '0'}`,
    )
    expect(tampered).not.toBe(stored.text)
    writeFileSync(file, JSON.stringify({ ...stored, text: tampered }))
    await expectUnavailable(RELEASES)
    await expectUnavailable(`${INSTALLERS}/print-hub_1.1.0_amd64.deb`)
    writeFileSync(file, JSON.stringify({ ...stored, signature: randomBytes(64).toString('base64') }))
    await expectUnavailable(RELEASES)
    writeFileSync(file, 'not json')
    await expectUnavailable(RELEASES)
    writeFileSync(file, original)
    expect((await get(RELEASES)).statusCode).toBe(200)
  })
})

describe('GET /agent-download-api/v1/installers/{filename}', () => {
  it('streams an installer byte for byte, with its SHA-256, length and a download file name', async () => {
    for (const filename of ['print-hub_1.1.0_amd64.deb', 'print-hub_1.0.0_linux-amd64.tar.gz']) {
      const res = await fetch(`${base}${INSTALLERS}/${filename}`)
      expect(res.status).toBe(200)
      const bytes = Buffer.from(await res.arrayBuffer())
      expect(bytes.equals(files.get(filename)!)).toBe(true)
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      expect(res.headers.get('content-type')).toBe('application/octet-stream')
      expect(res.headers.get('content-length')).toBe(String(bytes.length))
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${filename}"`)
      expect(res.headers.get('accept-ranges')).toBe('bytes')
      expect(res.headers.get('x-content-sha256')).toBe(sha256)
      expect(res.headers.get('etag')).toBe(`"${sha256}"`)
    }
  })

  it('serves one byte range with 206 and Content-Range; a range past the end is 416', async () => {
    const filename = 'print-hub_1.1.0_amd64.deb'
    const bytes = files.get(filename)!
    const size = bytes.length
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=1000-', 1000, size - 1],
      ['bytes=-10', size - 10, size - 1],
      [`bytes=${size - 5}-${size + 1000}`, size - 5, size - 1],
    ]
    for (const [range, start, end] of cases) {
      const res = await fetch(`${base}${INSTALLERS}/${filename}`, { headers: { range } })
      expect(res.status, range).toBe(206)
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`)
      expect(res.headers.get('content-length')).toBe(String(end - start + 1))
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(start, end + 1)), range).toBe(true)
    }
    const past = await fetch(`${base}${INSTALLERS}/${filename}`, { headers: { range: `bytes=${size}-` } })
    expect(past.status).toBe(416)
    expect(past.headers.get('content-range')).toBe(`bytes */${size}`)
    expect(await past.json()).toMatchObject({ error_code: 'range_not_satisfiable' })
    // Several ranges, another unit, or an If-Range for other bytes: the whole file.
    for (const headers of <Record<string, string>[]>[
      { range: 'bytes=0-1,5-6' },
      { range: 'items=0-1' },
      { range: 'bytes=0-1', 'if-range': '"other"' },
    ]) {
      const res = await fetch(`${base}${INSTALLERS}/${filename}`, { headers })
      expect(res.status).toBe(200)
      expect((await res.arrayBuffer()).byteLength).toBe(size)
    }
  })

  it.each([
    ['a name not in the catalog', 'print-hub_9.9.9_amd64.deb'],
    ['the catalog file', 'catalog.json'],
    ['the release key', 'release-key.pem'],
    ['an encoded slash', '1.1.0%2Fprint-hub_1.1.0_amd64.deb'],
    ['encoded dot segments', '..%2F..%2Freleases%2Fcatalog.json'],
    ['an encoded dot segment', '%2e%2e'],
    ['a dot segment', '..'],
    ['a NUL', 'print-hub_1.1.0_amd64.deb%00'],
    ['a NUL before a name', '%00print-hub_1.1.0_amd64.deb'],
    ['a backslash', '1.1.0%5Cprint-hub_1.1.0_amd64.deb'],
    ['an encoded backslash dot segment', '..%5C..%5Ccatalog.json'],
    ['a name of 129 characters', `${'a'.repeat(125)}.deb`],
    ['a name of 1000 characters (the router’s limit for any path parameter)', `${'a'.repeat(996)}.deb`],
    ['a trailing space', 'print-hub_1.1.0_amd64.deb%20'],
  ])('%s is 404 installer_not_found', async (_what, name) => {
    const res = await get(`${INSTALLERS}/${name}`)
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(['installer_not_found', 'not_found']).toContain(res.json().error_code)
  })

  // Sent as they are, over a socket: fetch and inject would resolve the dot segments first.
  it.each([
    `${INSTALLERS}/../releases`,
    `${INSTALLERS}/../../v1/releases`,
    `${INSTALLERS}/1.1.0/print-hub_1.1.0_amd64.deb`,
    `${INSTALLERS}/./print-hub_1.1.0_amd64.deb`,
    `${INSTALLERS}/..\\catalog.json`,
    `${INSTALLERS}//print-hub_1.1.0_amd64.deb`,
  ])('the raw path %s never reaches a file (404)', async (target) => {
    const head = await rawGet(target)
    expect(head).toMatch(/^HTTP\/1\.1 404 /)
    expect(head.toLowerCase()).toContain('content-type: application/json; charset=utf-8')
  })
})

describe('quotas and the API document', () => {
  it('both endpoints count against the per-address quota: 429 in the error body with its headers', async () => {
    const limited = await startTestCloud({ dataDir, env: { RATE_LIMIT_PER_IP: '3' } })
    try {
      for (const url of [RELEASES, `${INSTALLERS}/print-hub_1.1.0_amd64.deb`]) {
        const statuses: number[] = []
        let last = await limited.app.inject({
          method: 'GET',
          url,
          remoteAddress: `10.0.0.${url.length % 250}`,
        })
        statuses.push(last.statusCode)
        for (let i = 0; i < 3; i++) {
          last = await limited.app.inject({ method: 'GET', url, remoteAddress: `10.0.0.${url.length % 250}` })
          statuses.push(last.statusCode)
        }
        expect(statuses).toEqual([200, 200, 200, 429])
        expect(last.json()).toMatchObject({ error: 'rate_limited', error_code: 'rate_limited' })
        expect(last.headers['x-ratelimit-scope']).toBe('ip')
        expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      }
    } finally {
      await limited.app.close()
      await limited.storage.close()
    }
  })

  it('both routes are in /openapi.json with their schemas', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
    }
    const releases = doc.paths[RELEASES]?.get
    expect(releases?.operationId).toBe('getAgentReleases')
    expect(releases?.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/AgentReleaseCatalog' } } },
      headers: { ETag: { required: true }, 'X-Catalog-Signature': { required: true } },
    })
    expect(Object.keys(doc.components.schemas.AgentInstaller?.properties ?? {}).sort()).toEqual([
      'architecture',
      'filename',
      'format',
      'platform',
      'sha256',
      'size_bytes',
    ])
    const installer = doc.paths[`${INSTALLERS}/{filename}`]?.get
    expect(installer?.operationId).toBe('downloadAgentInstaller')
    expect(Object.keys(installer?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '206', '4XX', '429']),
    )
    expect(installer?.responses['200']).toMatchObject({ content: { 'application/octet-stream': {} } })
  })
})

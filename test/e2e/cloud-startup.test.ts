import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exitOf, runCli, spawnCli } from '../helpers/cli.ts'
import { freePort } from '../helpers/free-port.ts'
import {
  type CloudProcess,
  newTempDir,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from './harness.ts'

/** A second `cloud serve` that is expected to refuse to start: its exit code and what it said. */
async function secondCloud(env: Record<string, string>) {
  const child: ChildProcess = spawnCli('cloud/cli.ts', ['serve'], { HOST: '127.0.0.1', ...env })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  try {
    const status = await exitOf(child)
    return { status, stdout, stderr }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
  }
}

describe('a second cloud refuses to start, before it touches any state', () => {
  let cloud: CloudProcess
  let account: Awaited<ReturnType<typeof setUpAccount>>

  beforeAll(async () => {
    cloud = await startCloudProcess()
    account = await setUpAccount(cloud)
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [`socket://127.0.0.1:${await freePort()}?language=escpos&name=Till`],
    })
  })
  afterAll(() => stopAll())

  async function onlineStates() {
    const get = async (path: string) => {
      const res = await fetch(`${cloud.url}${path}`, {
        headers: { authorization: `Bearer ${account.accessToken}` },
      })
      return ((await res.json()) as { data: { online: boolean }[] }).data.map((item) => item.online)
    }
    return { hubs: await get('/api/v1/agents'), printers: await get('/api/v1/printers') }
  }

  it('(the first cloud has its hub and printer online)', async () => {
    await expect.poll(() => onlineStates(), { timeout: 10_000 }).toEqual({ hubs: [true], printers: [true] })
  })

  it('on a busy PORT: exits 1 naming PORT', async () => {
    const result = await secondCloud({
      DATA_DIR: await newTempDir('second-cloud-'),
      PORT: String(cloud.port),
      MQTT_PORT: String(await freePort()),
    })
    expect(result).toEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: PORT: 127.0.0.1:${cloud.port} is already in use (EADDRINUSE); stop the program that uses it or set PORT to a free port\n`,
    })
  })

  it('on a busy MQTT_PORT: exits 1 naming MQTT_PORT', async () => {
    const result = await secondCloud({
      DATA_DIR: await newTempDir('second-cloud-'),
      PORT: String(await freePort()),
      MQTT_PORT: String(cloud.mqttPort),
    })
    expect(result).toEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: MQTT_PORT: 127.0.0.1:${cloud.mqttPort} is already in use (EADDRINUSE); stop the program that uses it or set MQTT_PORT to a free port\n`,
    })
  })

  it('a second `npm start` with the same settings names PORT and leaves hubs and printers online', async () => {
    const result = await secondCloud({
      DATA_DIR: cloud.dataDir,
      PORT: String(cloud.port),
      MQTT_PORT: String(cloud.mqttPort),
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^cloud: PORT: /)
    expect(await onlineStates()).toEqual({ hubs: [true], printers: [true] })
  })

  it('on the same DATA_DIR with other ports: refused, and hubs and printers stay online', async () => {
    const result = await secondCloud({
      DATA_DIR: cloud.dataDir,
      PORT: String(await freePort()),
      MQTT_PORT: String(await freePort()),
    })
    expect(result).toEqual({
      status: 1,
      stdout: '',
      stderr: `cloud: DATA_DIR: ${cloud.dataDir} is in use by another running cloud; stop it or set DATA_DIR to another directory\n`,
    })
    expect(await onlineStates()).toEqual({ hubs: [true], printers: [true] })
    // The admin commands need only the database, so they still work while the cloud runs.
    const admin = runCli('cloud/cli.ts', ['account', 'create', '--name', 'While running'], {
      DATA_DIR: cloud.dataDir,
    })
    expect(admin).toMatchObject({ status: 0, stderr: '' })
    expect(JSON.parse(admin.stdout)).toMatchObject({ name: 'While running' })
  })
})

describe('stopping the cloud with hubs connected', () => {
  afterAll(() => stopAll())

  it('SIGINT: exit 0 and no error-level log line', async () => {
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [`socket://127.0.0.1:${await freePort()}?language=escpos`],
    })
    cloud.process.kill('SIGINT')
    expect(await exitOf(cloud.process)).toBe(0)
    const lines = cloud.logs
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
    expect(lines.filter((line) => line.level >= 50)).toEqual([])
    expect(lines.at(-1)?.msg).toBe('cloud stopped')
  }, 60_000)
})

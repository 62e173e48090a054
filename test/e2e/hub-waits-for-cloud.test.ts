import { afterAll, describe, expect, it } from 'vitest'
import { cloudCommand, exitOf, spawnCli, waitForLogLine } from '../helpers/cli.ts'
import { freePort } from '../helpers/free-port.ts'
import { FAST_HUB_ENV, newTempDir, startCloudProcess, stopAll } from './harness.ts'

describe('a hub started before its cloud', () => {
  const hubs: ReturnType<typeof spawnCli>[] = []
  afterAll(async () => {
    for (const hub of hubs) if (hub.exitCode === null) hub.kill('SIGKILL')
    await Promise.all(hubs.map((hub) => exitOf(hub)))
    await stopAll()
  })

  it('waits, logging each wait with the cloud URL and the delay, and enrols and connects once the cloud is up; later runs start at once and connect once it is up', async () => {
    const dataDir = await newTempDir('e2e-cloud-')
    const admin = (args: string[]) => cloudCommand(args, { DATA_DIR: dataDir })
    const { account_id } = await admin(['account', 'create', '--name', 'Early shop'])
    const { token } = await admin(['enrollment', 'create', '--account', account_id!, '--name', 'Early hub'])
    const port = await freePort()
    const cloudUrl = `http://127.0.0.1:${port}`
    const hubDir = await newTempDir('e2e-hub-')
    const hub = spawnCli('hub/cli.ts', ['run', '--cloud', cloudUrl, '--data', hubDir, '--enroll', token!], {
      ...FAST_HUB_ENV,
      HUB_CLOUD_RETRY_MAX_MS: '500',
    })
    hubs.push(hub)
    const waiting = await waitForLogLine(hub, (line) => line.msg === 'cloud not reachable yet; trying again')
    expect(waiting).toMatchObject({ level: 40, cloud: cloudUrl, step: 'enroll', status: null })
    expect(waiting.retry_in_ms).toBeGreaterThanOrEqual(0)
    expect(waiting.retry_in_ms).toBeLessThanOrEqual(500)
    expect(String(waiting.reason)).toMatch(new RegExp(`^cannot reach ${cloudUrl}/agent-api/v1/enroll: `))

    const ready = waitForLogLine(hub, (line) => line.msg === 'hub ready')
    const cloud = await startCloudProcess({ dataDir, port })
    expect(await ready).toMatchObject({ cloud: cloudUrl })
    await expect
      .poll(() => cloud.logs.join('').includes('"msg":"hub online"'), { timeout: 20_000 })
      .toBe(true)
    hub.kill('SIGTERM')
    expect(await exitOf(hub)).toBe(0)

    // Enrolled already, and the cloud is down again: the hub starts at once with the broker it was last told
    // (it prints on its LAN meanwhile, docs/lan-printing.md), looks the broker up again in the background, and
    // connects once the cloud is up, on whatever port its broker has now.
    expect(await cloud.stop()).toBe(0)
    const again = spawnCli('hub/cli.ts', ['run', '--cloud', cloudUrl, '--data', hubDir], {
      ...FAST_HUB_ENV,
      HUB_CLOUD_RETRY_MAX_MS: '500',
    })
    hubs.push(again)
    const waitingAgain = waitForLogLine(again, (line) => line.msg === 'cloud not reachable yet; trying again')
    expect(await waitForLogLine(again, (line) => line.msg === 'hub ready')).toMatchObject({
      cloud: cloudUrl,
      agent_id: (await ready).agent_id,
    })
    expect(await waitingAgain).toMatchObject({ cloud: cloudUrl, step: 'connection' })
    const cloudAgain = await startCloudProcess({ dataDir, port })
    await expect
      .poll(() => cloudAgain.logs.join('').includes('"msg":"hub online"'), { timeout: 20_000 })
      .toBe(true)
    again.kill('SIGTERM')
    expect(await exitOf(again)).toBe(0)
    // Six processes start one after the other (two CLI commands, two hubs, two clouds), each taking seconds
    // while the rest of the suite loads the machine: the timeout only bounds a run that fails.
  }, 180_000)

  it('stops with exit 0 on SIGTERM while it waits', async () => {
    const hub = spawnCli(
      'hub/cli.ts',
      [
        'run',
        '--cloud',
        `http://127.0.0.1:${await freePort()}`,
        '--data',
        await newTempDir('e2e-hub-'),
        '--enroll',
        'enr_never-used',
      ],
      { ...FAST_HUB_ENV, HUB_CLOUD_RETRY_MAX_MS: '60000' },
    )
    hubs.push(hub)
    await waitForLogLine(hub, (line) => line.msg === 'cloud not reachable yet; trying again')
    const stopping = waitForLogLine(hub, (line) => line.msg === 'hub stopping')
    hub.kill('SIGTERM')
    expect(await stopping).toMatchObject({ signal: 'SIGTERM' })
    expect(await exitOf(hub)).toBe(0)
  })
})

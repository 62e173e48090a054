import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import mqtt from 'mqtt'
import { afterEach, describe, expect, it } from 'vitest'
import { type MosquittoServer, startMosquitto } from './mosquitto-server.ts'
import { acceptsConnections } from './peer-process.ts'

/** Pids of the mosquitto processes reading this configuration file. */
function brokerPids(configFile: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `mosquitto -c ${configFile}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number)
  } catch {
    return [] // pgrep exits 1 when nothing matches
  }
}

/** A round trip through the broker: subscribe, publish, receive. */
async function roundTrip(url: string, options: mqtt.IClientOptions = {}): Promise<string> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, ...options })
  try {
    await client.subscribeAsync('test/echo', { qos: 1 })
    const received = new Promise<string>((resolve) => {
      client.once('message', (_topic, payload) => resolve(payload.toString()))
    })
    await client.publishAsync('test/echo', 'hello', { qos: 1 })
    return await received
  } finally {
    await client.endAsync()
  }
}

describe('mosquitto test peer', () => {
  let broker: MosquittoServer | undefined
  afterEach(async () => {
    await broker?.stop()
    broker = undefined
  })

  it('starts on 127.0.0.1 with anonymous access by default, carries a message, and stop() leaves nothing behind', async () => {
    broker = await startMosquitto()
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`)
    expect(await roundTrip(broker.url)).toBe('hello')
    const configFile = path.join(broker.dir, 'mosquitto.conf')
    const pids = brokerPids(configFile)
    expect(pids).toHaveLength(1)

    await broker.stop()
    expect(brokerPids(configFile)).toEqual([])
    expect(await acceptsConnections(broker.port)).toBe(false)
    expect(existsSync(broker.dir)).toBe(false)
    await broker.stop()
  })

  it('runs the configuration it is given, with its files (a password file), and never as root', async () => {
    const passwordFile = execFileSync(
      'sh',
      ['-c', 'f=$(mktemp) && mosquitto_passwd -b -c "$f" hub s3cret >/dev/null 2>&1; cat "$f"; rm -f "$f"'],
      { encoding: 'utf8' },
    )
    broker = await startMosquitto({
      config: ({ port, dir }) =>
        [
          `listener ${port} 127.0.0.1`,
          'allow_anonymous false',
          `password_file ${dir}/auth/passwd`,
          'log_type all',
          '',
        ].join('\n'),
      files: { 'auth/passwd': passwordFile },
    })
    await expect(mqtt.connectAsync(broker.url, { reconnectPeriod: 0 })).rejects.toThrow(/Not authorized/)
    expect(await roundTrip(broker.url, { username: 'hub', password: 's3cret' })).toBe('hello')
    expect(broker.log()).toMatch(/u'hub'/)

    const [pid] = brokerPids(path.join(broker.dir, 'mosquitto.conf'))
    const uid = Number(execFileSync('ps', ['-o', 'uid=', '-p', String(pid)], { encoding: 'utf8' }).trim())
    if (process.getuid?.() === 0) {
      expect(uid).not.toBe(0)
      // Its files are its own, readable by no one else.
      expect(statSync(path.join(broker.dir, 'auth/passwd'))).toMatchObject({ uid, mode: 0o100600 })
    } else {
      expect(uid).toBe(process.getuid?.())
    }
  })

  it('reports a configuration mosquitto refuses with its own message', async () => {
    await expect(startMosquitto({ config: 'no_such_option true' })).rejects.toThrow(/no_such_option/)
  })
})

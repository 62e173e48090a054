import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findDynsecPlugin } from '../../../cloud/broker/mosquitto-config.ts'
import { runCli } from '../../helpers/cli.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

/** `cloud mosquitto-config` writes Mosquitto's limits and the hubs' front from the cloud's settings. */
describe.runIf(findDynsecPlugin())('cloud mosquitto-config', () => {
  const scratch = tempDir('mosquitto-config-cli-')
  afterAll(() => scratch.remove())

  const run = (dir: string, env: Record<string, string>) =>
    runCli('cloud/cli.ts', ['mosquitto-config', '--dir', path.join(scratch.path, dir)], {
      DATA_DIR: scratch.path,
      ...env,
    })

  it('writes the front where hubs are told the broker is, with the settings, and Mosquitto’s connection limit', () => {
    const result = run('without-public-url', {
      MQTT_URL: 'mqtt://10.0.0.2:1884',
      MQTT_PORT: '1883',
      MQTT_CONNECT_TIMEOUT_MS: '3000',
      MQTT_MAX_PENDING_CONNECTIONS: '100',
      MQTT_MAX_CONNECTIONS: '5000',
      HUB_KEEPALIVE_SECONDS: '45',
    })
    expect(result.status).toBe(0)
    const written = JSON.parse(result.stdout)
    expect(written.hub_front).toEqual({
      config_file: path.join(written.dir, 'hub-front.cfg'),
      start: `haproxy -f ${path.join(written.dir, 'hub-front.cfg')}`,
      listen: '0.0.0.0:1883',
    })
    const front = readFileSync(written.hub_front.config_file, 'utf8')
    for (const line of [
      '  bind 0.0.0.0:1883',
      '  server mosquitto 10.0.0.2:1884',
      '  tcp-request inspect-delay 3000ms',
      '  timeout client 3000ms',
      '  tcp-request connection reject if { fe_conn gt 5000 }',
      '  tcp-request connection reject if { fe_conn,sub(sess.connected) gt 100 }',
      '  timeout tunnel 90s',
    ])
      expect(front.split('\n')).toContain(line)
    const conf = readFileSync(written.config_file, 'utf8').split('\n')
    expect(conf).toContain('listener 1884 10.0.0.2')
    expect(conf).toContain('max_connections 5064')

    const withPublicUrl = JSON.parse(
      run('with-public-url', {
        MQTT_URL: 'mqtt://10.0.0.2:1883',
        MQTT_PUBLIC_URL: 'mqtt://mqtt.example.com:8884',
      }).stdout,
    )
    expect(withPublicUrl.hub_front.listen).toBe('0.0.0.0:8884')
  })

  it('refuses to put the front and Mosquitto on one port', () => {
    const result = run('one-port', { MQTT_URL: 'mqtt://10.0.0.2:1883', MQTT_PORT: '1883' })
    expect(result.status).not.toBe(0)
    expect(result.stderr).toMatch(/both listen on port 1883/)
  })
})

import mqtt, { type MqttClient } from 'mqtt'
import { pino } from 'pino'
import { loadConfig } from '../../cloud/config.ts'
import { type RunningCloud, startCloud } from '../../cloud/server.ts'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import type { EnrollResponse } from '../../protocol/agent-api.ts'
import { freePort } from '../helpers/free-port.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { ALL_SCOPES, issueToken } from './test-cloud.ts'

/**
 * A whole cloud (API, broker, dispatcher) in this process on ephemeral loopback ports. The broker binds port 0
 * (hubs are told the port it got); the API's port is picked beforehand, because PUBLIC_URL names it.
 */
export async function startFullCloud(env: Record<string, string> = {}, logger = pino({ level: 'silent' })) {
  const dir = tempDir('cloud-full-')
  const port = await freePort()
  const config = loadConfig({
    DATA_DIR: dir.path,
    HOST: '127.0.0.1',
    PORT: String(port),
    MQTT_PORT: '0',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'silent',
    ...env,
  })
  const cloud: RunningCloud = await startCloud(config, logger)
  return {
    cloud,
    dataDir: dir.path,
    url: cloud.apiUrl,
    // What a hub that reaches the cloud at PUBLIC_URL is told (cloud/routes/agent-api.ts brokerUrlFor).
    mqttUrl:
      config.mqttPublicUrl ||
      `${config.mqttTlsCertFile ? 'mqtts' : 'mqtt'}://${new URL(config.publicUrl).hostname}:${cloud.broker.port}`,
    async close() {
      await cloud.close()
      dir.remove()
    },
  }
}

/** An account with a bearer token of every scope and a fresh enrollment token, made through storage. */
export async function seedAccount(cloud: RunningCloud, name = 'Shop') {
  const { storage } = cloud
  const account = await storage.accounts.create(name)
  const client = await storage.apiClients.create(
    account.account_id,
    hashSecret(generateSecret('cs')),
    ALL_SCOPES,
  )
  const token = await issueToken(storage, account.account_id, client.client_id)
  const enrollmentToken = generateSecret('enr')
  const enrollment = await storage.enrollments.create(
    account.account_id,
    `${name} hub`,
    hashSecret(enrollmentToken),
    new Date(Date.now() + 3600_000),
  )
  return { accountId: account.account_id, token, enrollmentToken, enrollmentId: enrollment.enrollment_id }
}

export async function enroll(url: string, token: string): Promise<EnrollResponse> {
  const res = await fetch(`${url}/agent-api/v1/enroll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, hostname: 'test-hub', agent_version: '0.0.0-test' }),
  })
  if (res.status !== 201) throw new Error(`enroll answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as EnrollResponse
}

/** Connects an MQTT client as a hub would; resolves once CONNACK arrived (or rejects with the refusal). */
export function connectHub(
  mqttUrl: string,
  options: {
    clientId: string
    username?: string
    password?: string
    keepalive?: number
    will?: mqtt.IClientOptions['will']
  },
): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(mqttUrl, {
      reconnectPeriod: 0,
      connectTimeout: 5000,
      clean: true,
      ...options,
    })
    client.once('connect', () => resolve(client))
    client.once('error', (error) => {
      client.end(true)
      reject(error)
    })
  })
}

import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import mqtt, { type MqttClient } from 'mqtt'
import type { EnrollResponse } from '../../protocol/agent-api.ts'
import { hubTopic, PROTOCOL_VERSION } from '../../protocol/hub-messages.ts'
import type { CloudProcess } from '../e2e/harness.ts'
import { nowMs, type Summary, summarize } from './stats.ts'

/**
 * A bare MQTT QoS 1 round trip on the cloud's own broker. The broker lets a hub publish only on its own
 * hub→cloud topics and subscribe only to its own cloud→hub topics, so no client can send a message to itself
 * through it. What is timed instead: an enrolled hub's QoS 1 PUBLISH until its PUBACK, i.e. client → broker
 * (authorisation, hand-off to the cloud's in-process subscriber) → client, one TCP round trip on loopback
 * with TCP_NODELAY on both ends, with mqtt.js on the client as the hub uses it.
 */
export interface MqttRoundTrips {
  /** `job-status` for a job id that does not exist: the cloud validates it, finds nothing, changes nothing. */
  jobStatus: Summary
  /** `presence` online: the cloud also writes the agent's online state and looks for jobs to re-offer. */
  presence: Summary
}

async function enrolledClient(cloud: CloudProcess, accountId: string): Promise<MqttClient> {
  const { token } = await cloud.admin([
    'enrollment',
    'create',
    '--account',
    accountId,
    '--name',
    'bench MQTT probe',
  ])
  const res = await fetch(`${cloud.url}/agent-api/v1/enroll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, hostname: 'bench-mqtt-probe', agent_version: '0.0.0-bench' }),
  })
  if (res.status !== 201) throw new Error(`enroll answered ${res.status}: ${await res.text()}`)
  const enrolled = (await res.json()) as EnrollResponse
  const client = await mqtt.connectAsync(enrolled.mqtt_url, {
    clientId: enrolled.agent_id,
    username: enrolled.agent_id,
    password: enrolled.credential,
    clean: true,
    keepalive: 30,
    reconnectPeriod: 0,
    connectTimeout: 5000,
  })
  // mqtt.js does not pass noDelay through (STACK-NOTES): without this, Nagle + delayed ACK costs ~40–90 ms.
  ;(client.stream as Socket).setNoDelay(true)
  return client
}

async function time(client: MqttClient, count: number, publish: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    if (!client.connected) throw new Error('MQTT probe disconnected')
    const t0 = nowMs()
    await publish()
    samples.push(nowMs() - t0)
  }
  return samples
}

export async function measureMqttRoundTrips(
  cloud: CloudProcess,
  accountId: string,
  options: { warmup: number; count: number },
): Promise<MqttRoundTrips & { agentId: string }> {
  const client = await enrolledClient(cloud, accountId)
  const agentId = client.options.clientId!
  try {
    const jobStatus = () =>
      client.publishAsync(
        hubTopic(agentId, 'job-status'),
        JSON.stringify({
          v: PROTOCOL_VERSION,
          print_job_id: randomUUID(),
          status: 'printed',
          at: new Date().toISOString(),
        }),
        { qos: 1 },
      )
    const session = randomUUID()
    const presence = () =>
      client.publishAsync(
        hubTopic(agentId, 'presence'),
        JSON.stringify({ v: PROTOCOL_VERSION, online: true, session }),
        { qos: 1 },
      )
    await time(client, options.warmup, jobStatus)
    const statusSamples = await time(client, options.count, jobStatus)
    await time(client, options.warmup, presence)
    const presenceSamples = await time(client, options.count, presence)
    return { agentId, jobStatus: summarize(statusSamples), presence: summarize(presenceSamples) }
  } finally {
    await client.endAsync()
  }
}

import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { CloudClient, CloudError } from '../../../hub/cloud/cloud-client.ts'
import { CloudUrlError } from '../../../hub/cloud/cloud-url.ts'
import { untilCloudAnswers } from '../../../hub/cloud/wait-for-cloud.ts'
import { Backoff } from '../../../hub/session/backoff.ts'

/** A cloud on loopback that answers the enroll call from a script, one answer per call. */
async function scriptedCloud(answers: { status: number; headers?: Record<string, string>; body: object }[]) {
  let calls = 0
  const server: Server = createServer((_req, res) => {
    const answer = answers[Math.min(calls++, answers.length - 1)]!
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
    res.end(JSON.stringify(answer.body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls }
}
const servers: Server[] = []

function recordingLogger() {
  const lines: Record<string, unknown>[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  return { logger, lines }
}

const ENROLLED = {
  agent_id: '3f1c1a52-8a52-4d3c-9a3a-2f0c7b0a9e11',
  account_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  name: 'Front desk',
  credential: 'hub_credential',
  mqtt_url: 'mqtt://127.0.0.1:1883',
}

describe('waiting for the cloud', () => {
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
  })

  it('tries again after a 503 (waiting its Retry-After) and a 500 (waiting the backoff), each wait logged once', async () => {
    const cloud = await scriptedCloud([
      {
        status: 503,
        headers: { 'retry-after': '0' },
        body: { error: 'service_unavailable', error_code: 'shutting_down', message: 'later' },
      },
      { status: 500, body: { error: 'internal_error', error_code: 'internal_error', message: 'oops' } },
      { status: 201, body: ENROLLED },
    ])
    const { logger, lines } = recordingLogger()
    const client = new CloudClient(cloud.url)
    const enrolled = await untilCloudAnswers('enroll', () => client.enroll('enr_x', 'pi', '0.1.0'), {
      cloudUrl: cloud.url,
      logger,
      backoff: new Backoff(20, 40, () => 1),
    })
    expect(enrolled).toEqual(ENROLLED)
    expect(cloud.calls()).toBe(3)
    expect(lines.map((line) => [line.msg, line.cloud, line.step, line.status, line.retry_in_ms])).toEqual([
      ['cloud not reachable yet; trying again', cloud.url, 'enroll', 503, 0],
      ['cloud not reachable yet; trying again', cloud.url, 'enroll', 500, 20],
    ])
  })

  it('a refusal (4xx other than 429) is not waited out', async () => {
    const cloud = await scriptedCloud([
      {
        status: 401,
        body: {
          error: 'unauthorized',
          error_code: 'enrollment_token_invalid',
          message: 'No enrollment has this token.',
        },
      },
    ])
    const { logger, lines } = recordingLogger()
    const client = new CloudClient(cloud.url)
    const error = await untilCloudAnswers('enroll', () => client.enroll('enr_x', 'pi', '0.1.0'), {
      cloudUrl: cloud.url,
      logger,
      backoff: new Backoff(20, 40),
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CloudError)
    expect((error as CloudError).code).toBe('enrollment_token_invalid')
    expect(cloud.calls()).toBe(1)
    expect(lines).toEqual([])
  })

  it('https:// to a plain HTTP port is a --cloud error, not waited out', async () => {
    const cloud = await scriptedCloud([{ status: 201, body: ENROLLED }])
    const tlsUrl = cloud.url.replace('http:', 'https:')
    const { logger } = recordingLogger()
    const client = new CloudClient(tlsUrl)
    const error = await untilCloudAnswers('enroll', () => client.enroll('enr_x', 'pi', '0.1.0'), {
      cloudUrl: tlsUrl,
      logger,
      backoff: new Backoff(20, 40),
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CloudUrlError)
    expect((error as Error).message).toBe(
      `--cloud ${tlsUrl} speaks TLS to a port that answers plain HTTP; pass ${cloud.url}, or serve the cloud over TLS`,
    )
  })
})

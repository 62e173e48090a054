import createClient from 'openapi-fetch'
// Your types, generated from the cloud's document: npx openapi-typescript https://CLOUD/openapi.json -o print-api.ts
import type { components, paths } from 'print-hub-openapi'
import { Agent, buildConnector } from 'undici'

// A till that prints through the cloud, and through its hub on the shop's LAN when the cloud cannot be
// reached (docs/lan-printing.md). Both take the same requests with the same access token, and the hub keys
// printing by the Idempotency-Key across both: a job sent to the cloud that timed out, sent again to the hub
// with the same key, prints once.

export type PrintJob = components['schemas']['PrintJob']
type ErrorBody = components['schemas']['Error']
type RawJob = paths['/api/v1/print-jobs/from-base64']['post']['requestBody']['content']['application/json']

export interface TillOptions {
  cloudUrl: string
  /** The hub's LAN API, e.g. https://192.168.1.20:8443 (found with DNS-SD, or shown in the console). */
  hubUrl: string
  /** The hub's certificate SHA-256 in hex, as GET /api/v1/agents publishes it (`lan_api.endpoint`). */
  hubCertSha256: string
  accessToken: string
  /** How long the cloud has to answer before the till turns to the hub; 3 s by default. */
  cloudTimeoutMs?: number
}

/** Where a job was sent, and its answer. */
export interface Printed {
  job: PrintJob
  via: 'cloud' | 'hub'
}

export class PrintFailed extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(`${status} ${body.error_code}: ${body.message}`)
  }
}

/**
 * TLS to the hub, trusting exactly the certificate the cloud published for it: no public CA can vouch for a
 * device on a private address, so the pin is checked before any byte of a request is sent.
 */
export function pinnedToHub(certSha256: string): Agent {
  // No session resumption: a resumed session shows no certificate to check (getPeerCertificate() is {}).
  const connect = buildConnector({ rejectUnauthorized: false, maxCachedSessions: 0 })
  return new Agent({
    connect(options, callback) {
      connect(options, (error, socket) => {
        if (error !== null) return callback(error, null)
        const presented =
          'getPeerCertificate' in socket ? socket.getPeerCertificate().fingerprint256 : undefined
        if (presented?.replaceAll(':', '').toLowerCase() !== certSha256) {
          socket.destroy()
          return callback(new Error('the hub presented a certificate the cloud did not publish'), null)
        }
        callback(null, socket)
      })
    },
  })
}

export class Till {
  readonly #cloud
  readonly #hub
  readonly #timeoutMs: number

  constructor(options: TillOptions) {
    const headers = { Authorization: `Bearer ${options.accessToken}` }
    this.#cloud = createClient<paths>({ baseUrl: options.cloudUrl, headers })
    const dispatcher = pinnedToHub(options.hubCertSha256)
    this.#hub = createClient<paths>({
      baseUrl: options.hubUrl,
      headers,
      fetch: (request) => fetch(request, { dispatcher }),
    })
    this.#timeoutMs = options.cloudTimeoutMs ?? 3000
  }

  /**
   * Prints through the cloud, or through the hub if the cloud does not answer in time or answers 5xx. The
   * same key goes to both: keep it with the order, and send it again with every retry of the same receipt.
   */
  async print(job: RawJob, idempotencyKey: string): Promise<Printed> {
    const params = { header: { 'idempotency-key': idempotencyKey } }
    try {
      const answer = await this.#cloud.POST('/api/v1/print-jobs/from-base64', {
        params,
        body: job,
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
      if (answer.data !== undefined) return { job: answer.data, via: 'cloud' }
      if (answer.error !== undefined && answer.response.status < 500)
        throw new PrintFailed(answer.response.status, answer.error)
    } catch (error) {
      if (error instanceof PrintFailed) throw error
      // Unreachable, timed out, or refused: the same request to the hub.
    }
    const answer = await this.#hub.POST('/api/v1/print-jobs/from-base64', { params, body: job })
    if (answer.data !== undefined) return { job: answer.data, via: 'hub' }
    throw failure(answer)
  }

  /** The job as the place it was sent to sees it; once the link is back the cloud shows it too, by the same id. */
  async status({ job, via }: Printed): Promise<PrintJob> {
    const client = via === 'cloud' ? this.#cloud : this.#hub
    const answer = await client.GET('/api/v1/print-jobs/{printJobId}', {
      params: { path: { printJobId: job.print_job_id } },
    })
    if (answer.data !== undefined) return answer.data
    throw failure(answer)
  }
}

function failure(answer: { error?: ErrorBody; response: Response }): Error {
  if (answer.error === undefined) return new Error(`no body in a ${answer.response.status} answer`)
  return new PrintFailed(answer.response.status, answer.error)
}

import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { ApiError } from '../../print-api/api-error.ts'

/**
 * When an external broker (MQTT_URL) authenticates hubs, the cloud gives each hub its broker client while it
 * holds the hub's plaintext credential: at enrollment, and at every connection lookup (so hubs enrolled
 * before, or whose client was lost, get one when they start). Only the hash is ever stored by the cloud.
 */
export type ProvisionHub = (agentId: string, credential: string) => Promise<void>

const BEARER = /^Bearer\s+(\S+)\s*$/i

/** At enrollment: a failure is logged, not fatal (the token is spent; the hub's lookup provisions it next). */
export async function provisionEnrolledHub(
  provision: ProvisionHub | undefined,
  agentId: string,
  credential: string,
  log: FastifyBaseLogger,
): Promise<void> {
  if (!provision) return
  try {
    await provision(agentId, credential)
  } catch (error) {
    log.warn(
      { agent_id: agentId, reason: (error as Error).message },
      'hub not given its broker client yet; its connection lookup tries again',
    )
  }
}

/** At the connection lookup (hub already authenticated): a broker that cannot be told answers 503. */
export async function provisionConnectingHub(
  provision: ProvisionHub | undefined,
  agentId: string,
  request: FastifyRequest,
): Promise<void> {
  if (!provision) return
  const credential = BEARER.exec(request.headers.authorization ?? '')?.[1]
  if (!credential) return
  try {
    await provision(agentId, credential)
  } catch (error) {
    request.log.warn(
      { agent_id: agentId, reason: (error as Error).message },
      'hub not given its broker client: the broker did not answer',
    )
    throw new ApiError(
      'not_ready',
      'The MQTT broker cannot take this hub right now; retry shortly.',
      { not_ready: ['broker'] },
      {
        'retry-after': '5',
      },
    )
  }
}

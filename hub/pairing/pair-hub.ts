import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { EnrollResponse } from '../../protocol/agent-api.ts'
import { type CloudClient, CloudError } from '../cloud/cloud-client.ts'
import { untilCloudAnswers, type WaitForCloudOptions } from '../cloud/wait-for-cloud.ts'

export interface PairHubOptions {
  client: CloudClient
  hostname: string
  agentVersion: string
  wait: WaitForCloudOptions
  logger: Logger
  /** Shows a fresh code beyond the log (prints it), not awaited; a failure is logged, pairing goes on. */
  announce?: (userCode: string) => Promise<void>
  /** Waits between polls (tests pass their own). */
  pause?: (ms: number) => Promise<void>
}

/** RFC 8628 §3.5: a slow_down answer adds 5 seconds to the interval for this and every later poll. */
const SLOW_DOWN_SECONDS = 5

/**
 * Pairs a hub that has no identity (docs/developer-platform.md, "Pairing a hub"): asks the cloud for a pairing,
 * shows the user code, polls at the interval until an installer typed the code on an onboarding page, and
 * asks for a new code whenever one expires. Resolves with the hub's credential, as an enrollment gives it.
 */
export async function pairHub(options: PairHubOptions): Promise<EnrollResponse> {
  const { client, wait, logger } = options
  const pause = options.pause ?? ((ms: number) => sleep(ms))
  for (;;) {
    const pairing = await untilCloudAnswers(
      'pairing',
      () => client.requestPairing(options.hostname, options.agentVersion),
      wait,
    )
    logger.info(
      { pairing_code: pairing.user_code, expires_in_s: pairing.expires_in },
      `pairing code ${pairing.user_code}: open the onboarding link you were given and type this code`,
    )
    // Not awaited: a printer that does not take the slip must not hold up pairing.
    options.announce?.(pairing.user_code).catch((error: unknown) => {
      logger.warn({ err: error }, 'could not print the pairing code; it is in this log')
    })
    let intervalSeconds = pairing.interval
    for (;;) {
      await pause(intervalSeconds * 1000)
      try {
        return await untilCloudAnswers('pairing poll', () => client.pollPairing(pairing.device_code), wait)
      } catch (error) {
        if (!(error instanceof CloudError)) throw error
        if (error.code === 'authorization_pending') continue
        if (error.code === 'slow_down') {
          intervalSeconds += SLOW_DOWN_SECONDS
          continue
        }
        if (error.code !== 'expired_token' && error.code !== 'pairing_device_code_invalid') throw error
        logger.info({ reason: error.code }, 'pairing code no longer valid; asking for a new one')
        break
      }
    }
  }
}

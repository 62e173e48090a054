import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { Backoff } from '../session/backoff.ts'
import { CloudError } from './cloud-client.ts'
import { isTlsToPlainHttp, tlsToPlainHttpError } from './cloud-url.ts'

export interface WaitForCloudOptions {
  cloudUrl: string
  logger: Logger
  /** Delays between tries when the cloud gave no Retry-After: exponential with full jitter. */
  backoff: Backoff
}

/** The longest Retry-After honoured; a larger one is read as this. */
const MAX_RETRY_AFTER_MS = 5 * 60_000

/**
 * Calls the cloud until it answers: a hub may boot before its network or its cloud. An unreachable cloud,
 * a 5xx, 429 or 503 is tried again after the cloud's Retry-After or the next backoff delay, each wait logged
 * once with the cloud URL and the delay. A refusal (another 4xx) and TLS spoken to a plain HTTP port are
 * not going to change, so they are thrown.
 */
export async function untilCloudAnswers<T>(
  step: string,
  call: () => Promise<T>,
  options: WaitForCloudOptions,
): Promise<T> {
  const { cloudUrl, logger, backoff } = options
  for (;;) {
    try {
      const answer = await call()
      backoff.reset()
      return answer
    } catch (error) {
      if (!(error instanceof CloudError) || error.refused) throw error
      if (isTlsToPlainHttp(error)) throw tlsToPlainHttpError(cloudUrl)
      const delayMs = Math.min(error.retryAfterMs ?? backoff.next(), MAX_RETRY_AFTER_MS)
      logger.warn(
        { cloud: cloudUrl, step, reason: error.message, status: error.status, retry_in_ms: delayMs },
        'cloud not reachable yet; trying again',
      )
      await sleep(delayMs)
    }
  }
}

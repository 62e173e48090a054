import type { Logger } from 'pino'

export interface RevokedHubWatchOptions {
  /** Hubs revoked at or after an ISO time (storage.agents.revokedSince). */
  revokedSince(since: string): { agent_id: string; revoked_at: string }[]
  /** Closes a hub's MQTT session; whether it had one (broker.disconnect). */
  disconnect(agentId: string): boolean
  logger: Logger
  intervalMs: number
}

/** How far back each check looks: far more than a revocation takes from its timestamp to its commit. */
const LOOK_BACK_MS = 60_000

/**
 * Closes the MQTT session of a hub whose credential was revoked, within `intervalMs`. `cloud hub revoke` is
 * another process with only the database, so every cloud node looks for revocations rather than being told;
 * the broker refuses the hub's next CONNECT by itself (its credential no longer matches a hub).
 */
export function watchRevokedHubs(options: RevokedHubWatchOptions): { stop(): void } {
  const { revokedSince, disconnect, logger, intervalMs } = options
  const timer = setInterval(() => {
    try {
      for (const hub of revokedSince(new Date(Date.now() - LOOK_BACK_MS).toISOString())) {
        if (disconnect(hub.agent_id))
          logger.warn(
            { agent_id: hub.agent_id, revoked_at: hub.revoked_at },
            'hub revoked: mqtt session closed',
          )
      }
    } catch (error) {
      logger.error({ err: error }, 'checking for revoked hubs failed; the next check tries again')
    }
  }, intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

import type { Logger } from 'pino'
import type { HubBus } from '../broker/hub-bus.ts'
import type { Storage } from '../storage/storage.ts'

export interface LanRefreshOptions {
  storage: Pick<Storage, 'agents'>
  bus: HubBus
  logger: Logger
  intervalMs: number
}

/** How far back each check looks: far more than a change takes from its timestamp to its commit. */
const LOOK_BACK_MS = 60_000

/**
 * Tells a hub `refresh_lan` (fetch its LAN credentials document again) within `intervalMs` of a change to it:
 * its LAN API enabled or disabled, or, while enabled, an API client of its account made or revoked. Those
 * changes are made by the console, the partner API and `cloud hub lan` / `cloud client revoke` (another
 * process with only the database), so every node looks for them in the database rather than being told, as
 * for revoked hubs (broker/revoked-hubs.ts). Each node tells each change once; a hub told twice by two nodes
 * only fetches the document twice.
 */
export function watchLanChanges(options: LanRefreshOptions): { stop(): Promise<void> } {
  const { storage, bus, logger, intervalMs } = options
  /** Each change told, by hub and time → its time, kept while it is within the look-back. */
  const told = new Map<string, string>()
  let checking: Promise<void> | undefined
  const check = async () => {
    const since = new Date(Date.now() - LOOK_BACK_MS).toISOString()
    for (const [key, at] of told) if (at < since) told.delete(key)
    for (const change of await storage.agents.lanChangesSince(since)) {
      const key = `${change.agent_id} ${change.at}`
      if (told.has(key)) continue
      told.set(key, change.at)
      await bus.publish(change.agent_id, 'command', { v: 1, command: 'refresh_lan' })
    }
  }
  const timer = setInterval(() => {
    checking ??= check()
      .catch((error: unknown) =>
        logger.error({ err: error }, 'telling hubs of LAN changes failed; the next check tries again'),
      )
      .finally(() => {
        checking = undefined
      })
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await checking
    },
  }
}

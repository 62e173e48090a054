import type { Storage } from '../storage/storage.ts'

/**
 * Ends a revoked hub's presence, with its printers', unless it already ended; safe to run on every node. For
 * an external broker, which publishes no last will for the client it deletes, and for the console, which
 * shows the hub gone at once.
 */
export async function takeRevokedHubOffline(
  storage: Pick<Storage, 'agents' | 'hubPresence'>,
  agentId: string,
): Promise<void> {
  if (!(await storage.agents.findById(agentId))?.online) return
  const at = new Date().toISOString()
  await storage.hubPresence.markOffline(agentId, null, at)
  await storage.hubPresence.printersLastSeen(agentId, at)
}

import type { Storage } from '../storage/storage.ts'

/**
 * Before the embedded broker starts: sessions do not survive its restart, so every hub is offline until it
 * reconnects and says so. An external broker (MQTT_URL) keeps them, and the presence every node records.
 */
export async function endEmbeddedSessions(storage: Pick<Storage, 'hubPresence'>): Promise<void> {
  await storage.hubPresence.markAllOffline()
}

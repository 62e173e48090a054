import { EventEmitter } from 'node:events'

/** What the hub's parts tell one another (the spool's outbox has its own: `Spool.onOutbox`). */
export interface HubEventMap {
  /**
   * The session connected, or the cloud asked who is here: the presence is out, and what follows a connect
   * is due (the state report, the outbox again).
   */
  connected: []
  /** The state report is due: a printer's health or capabilities changed, a health round ended, or the update's progress changed. */
  stateDue: []
  /** The cloud asked the hub to fetch its LAN credentials again (`refresh_lan`, docs/lan-printing.md). */
  lanDue: []
}

export class HubEvents extends EventEmitter<HubEventMap> {}

import type { Agent } from '../../protocol/agent.ts'
import type { Printer } from '../../protocol/printer.ts'

/** The release a hub reported running, or why none is shown. */
export const versionWords = (hub: Pick<Agent, 'version'>): string => hub.version ?? 'Not reported yet'

/** The printers of each hub, by the hub's id, in the order given. */
export function printersByHub(printers: readonly Printer[]): Map<string, Printer[]> {
  const byHub = new Map<string, Printer[]>()
  for (const printer of printers) {
    const list = byHub.get(printer.agent_id)
    if (list) list.push(printer)
    else byHub.set(printer.agent_id, [printer])
  }
  return byHub
}

/** "1 printer", "3 printers", "No printers". */
export const printerCountWords = (count: number): string =>
  count === 0 ? 'No printers' : count === 1 ? '1 printer' : `${count} printers`

import { parseArgs } from 'node:util'
import { type Environment, NotFoundError, UsageError, withStorage } from './common.ts'

/**
 * `hub lan enable|disable AGENT_ID`: whether the hub serves the print API on its LAN (docs/lan-printing.md),
 * off unless enabled. A running cloud tells the hub within a second (presence/lan-refresh.ts).
 */
function setLanApi(enabled: boolean) {
  return (args: string[], env: Environment): Promise<object> => {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true })
    const [agentId, ...extra] = positionals
    if (agentId === undefined || agentId.trim() === '' || extra.length > 0)
      throw new UsageError(`give one AGENT_ID: cloud hub lan ${enabled ? 'enable' : 'disable'} AGENT_ID`)
    return withStorage(env, async (storage) => {
      const hub = await storage.agents.findById(agentId)
      const changed =
        hub && (await storage.agents.setLanApi(hub.account_id, agentId, enabled, new Date().toISOString()))
      if (!hub || !changed) throw new NotFoundError(`no hub ${agentId}`)
      return { ...changed, account_id: hub.account_id }
    })
  }
}

export const hubLanEnable = setLanApi(true)
export const hubLanDisable = setLanApi(false)

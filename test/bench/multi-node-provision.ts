import { generateSecret, hashSecret } from '../../cloud/auth/secrets.ts'
import { hubRole } from '../../cloud/broker/dynsec.ts'
import { dynsecPassword, hubRoleAcls } from '../../cloud/broker/mosquitto-config.ts'
import type { Storage } from '../../cloud/storage/storage.ts'
import type { WorkerHub } from './multi-node-hub-worker.ts'

/**
 * Many enrolled hubs without many HTTP enrolments: each hub is made by the storage calls the enrolment route
 * makes (an enrollment with a token hash, then its claim, which creates the agent with its credential's hash),
 * with a fresh token and credential of its own. `parallel` claims at a time (a PostgreSQL pool takes several).
 */
export async function enrollHubs(
  storage: Storage,
  accountId: string,
  count: number,
  parallel: number,
): Promise<WorkerHub[]> {
  const hubs: WorkerHub[] = []
  const expires = new Date(Date.now() + 3600_000)
  let next = 0
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const n = next++
        const token = generateSecret('enr')
        const credential = generateSecret('hub')
        await storage.enrollments.create(accountId, `bench hub ${n}`, hashSecret(token), expires)
        const claimed = await storage.enrollments.claim(
          hashSecret(token),
          hashSecret(credential),
          `bench-hub-${n}`,
          new Date(),
        )
        if (claimed.outcome !== 'claimed') throw new Error(`bench hub ${n}: claim ${claimed.outcome}`)
        hubs.push({ agentId: claimed.agentId, credential })
      }
    }),
  )
  return hubs
}

interface DynsecFile {
  clients: Record<string, unknown>[]
  roles: Record<string, unknown>[]
  [key: string]: unknown
}

/**
 * The dynamic-security state `cloud mosquitto-config` wrote, with every hub's client and role added as the
 * cloud's provisioning makes them (cloud/broker/dynsec.ts provisionHub: the agent id as user name and client
 * id, the credential as password, one role allowing only its own topics), in the plugin's file format, so
 * that Mosquitto starts with them instead of being sent 19,500 `createClient` commands (the plugin rewrites its
 * whole file after each).
 */
export function dynsecWithHubs(state: string, hubs: WorkerHub[]): string {
  const parsed = JSON.parse(state) as DynsecFile
  for (const hub of hubs) {
    parsed.roles.push({
      rolename: hubRole(hub.agentId),
      acls: hubRoleAcls(hub.agentId).map((acl) => ({ priority: 0, ...acl })),
    })
    parsed.clients.push({
      username: hub.agentId,
      clientid: hub.agentId,
      textname: `hub ${hub.agentId}`,
      roles: [{ rolename: hubRole(hub.agentId) }],
      ...dynsecPassword(hub.credential),
    })
  }
  return JSON.stringify(parsed)
}

import { hubRole } from '../../cloud/broker/dynsec.ts'
import { dynsecPassword, hubRoleAcls } from '../../cloud/broker/mosquitto-config.ts'
import type { Storage } from '../../cloud/storage/storage.ts'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import type { WorkerHub } from './multi-node-hub-worker.ts'

/** An account with an API client that may upload documents and create jobs. */
export interface BenchAccount {
  accountId: string
  clientId: string
  clientSecret: string
}

/** `count` accounts, each with an API client, as `cloud account create` and `cloud client create` make them. */
export async function createAccounts(storage: Storage, count: number): Promise<BenchAccount[]> {
  const accounts: BenchAccount[] = []
  for (let n = 0; n < count; n++) {
    const { account_id } = await storage.accounts.create(`Bench shop ${n}`)
    const clientSecret = generateSecret('cs')
    const client = await storage.apiClients.create(account_id, hashSecret(clientSecret), [
      'documents:write',
      'print_jobs:write',
    ])
    accounts.push({ accountId: account_id, clientId: client.client_id, clientSecret })
  }
  return accounts
}

/**
 * Many enrolled hubs without many HTTP enrolments: each hub is made by the storage calls the enrolment route
 * makes (an enrollment with a token hash, then its claim, which creates the agent with its credential's hash),
 * with a fresh token and credential of its own. Hub n belongs to account n modulo their number. `parallel` claims at a time (a PostgreSQL pool takes several).
 */
export async function enrollHubs(
  storage: Storage,
  accounts: BenchAccount[],
  count: number,
  parallel: number,
): Promise<(WorkerHub & { account: BenchAccount })[]> {
  const hubs: (WorkerHub & { account: BenchAccount })[] = []
  const expires = new Date(Date.now() + 3600_000)
  let next = 0
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const n = next++
        const account = accounts[n % accounts.length]!
        const token = generateSecret('enr')
        const credential = generateSecret('hub')
        await storage.enrollments.create(account.accountId, `bench hub ${n}`, hashSecret(token), expires)
        const claimed = await storage.enrollments.claim(
          hashSecret(token),
          hashSecret(credential),
          `bench-hub-${n}`,
          new Date(),
        )
        if (claimed.outcome !== 'claimed') throw new Error(`bench hub ${n}: claim ${claimed.outcome}`)
        hubs.push({ agentId: claimed.agentId, credential, account })
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

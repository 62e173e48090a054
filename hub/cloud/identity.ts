import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** What the hub keeps after enrollment: who it is and its secret (file mode 0600, DESIGN: secrets). */
export interface HubIdentity {
  agent_id: string
  account_id: string
  name: string
  credential: string
  cloud_url: string
}

export const IDENTITY_FILE = 'identity.json'

export function readIdentity(dataDir: string): HubIdentity | null {
  const file = path.join(dataDir, IDENTITY_FILE)
  if (!existsSync(file)) return null
  return JSON.parse(readFileSync(file, 'utf8')) as HubIdentity
}

export function writeIdentity(dataDir: string, identity: HubIdentity): void {
  const file = path.join(dataDir, IDENTITY_FILE)
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 })
  renameSync(temp, file)
}

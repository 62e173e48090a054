import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { type Static, Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { writeStateFile } from '../state-file.ts'

/** What the hub keeps after enrollment: who it is and its secret (file mode 0600, docs/architecture.md: what keeps it safe). */
export const HubIdentity = Type.Object({
  agent_id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  credential: Type.String({ minLength: 1 }),
  cloud_url: Type.String({ pattern: '^https?://' }),
})
export type HubIdentity = Static<typeof HubIdentity>

const check = Compile(HubIdentity)

export const IDENTITY_FILE = 'identity.json'

/** The identity file is there but is not one (damaged, or edited by hand). */
export class IdentityFileError extends Error {
  constructor(file: string, why: string) {
    super(
      `${file} is not a hub identity (${why}); move it away and enrol again with --enroll TOKEN, ` +
        'or restore it from a backup',
    )
    this.name = 'IdentityFileError'
  }
}

/** The stored identity, checked against its schema; null when the hub was never enrolled. */
export function readIdentity(dataDir: string): HubIdentity | null {
  const file = path.join(dataDir, IDENTITY_FILE)
  if (!existsSync(file)) return null
  let value: unknown
  try {
    value = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    throw new IdentityFileError(file, 'not JSON')
  }
  if (!check.Check(value)) {
    const first = check.Errors(value)[0]
    throw new IdentityFileError(file, `${first?.instancePath || '/'} ${first?.message ?? 'invalid'}`.trim())
  }
  return value
}

export function writeIdentity(dataDir: string, identity: HubIdentity): void {
  writeStateFile(path.join(dataDir, IDENTITY_FILE), `${JSON.stringify(identity, null, 2)}\n`)
}

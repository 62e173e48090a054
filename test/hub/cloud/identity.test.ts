import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { IDENTITY_FILE, IdentityFileError, readIdentity, writeIdentity } from '../../../hub/cloud/identity.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

const IDENTITY = {
  agent_id: '6f1c2a4e-8a1b-4c5d-9e0f-1a2b3c4d5e6f',
  account_id: '0b3ee3a4-8f3d-4a38-9c2b-6f2d3c1b6f10',
  name: 'Front desk',
  credential: 'hub_secret',
  cloud_url: 'http://127.0.0.1:8080',
}

describe('the hub identity file', () => {
  let dir: ReturnType<typeof tempDir>
  beforeEach(() => {
    dir = tempDir('hub-identity-')
  })
  afterEach(() => dir.remove())

  it('is null before enrollment and reads back what was written', () => {
    expect(readIdentity(dir.path)).toBeNull()
    writeIdentity(dir.path, IDENTITY)
    expect(readIdentity(dir.path)).toEqual(IDENTITY)
  })

  it.each([
    ['not JSON', '{"agent_id": ', 'not JSON'],
    ['a field missing', JSON.stringify({ ...IDENTITY, credential: undefined }), 'credential'],
    ['a field of the wrong kind', JSON.stringify({ ...IDENTITY, agent_id: 42 }), '/agent_id'],
    ['a cloud URL without scheme', JSON.stringify({ ...IDENTITY, cloud_url: 'cloud:8080' }), '/cloud_url'],
  ])('refuses %s with a message that names the file and what is wrong', (_what, text, named) => {
    writeFileSync(path.join(dir.path, IDENTITY_FILE), text)
    expect(() => readIdentity(dir.path)).toThrow(IdentityFileError)
    expect(() => readIdentity(dir.path)).toThrow(named)
    expect(() => readIdentity(dir.path)).toThrow(path.join(dir.path, IDENTITY_FILE))
  })
})

import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Compile } from 'typebox/compile'
import { ConnectionInfo } from '../../protocol/agent-api.ts'
import { writeStateFile } from '../state-file.ts'

export const LAST_CONNECTION_FILE = 'connection.json'

const check = Compile(ConnectionInfo)

/**
 * The broker the cloud last named for this hub (GET /agent-api/v1/connection), kept so that a hub started
 * while the cloud cannot be reached (a power cut during an internet outage) starts at once: it prints on its
 * LAN (docs/lan-printing.md) and connects when the link is back. Null when never kept, or not readable.
 */
export function readLastConnection(dataDir: string): ConnectionInfo | null {
  try {
    const value: unknown = JSON.parse(readFileSync(path.join(dataDir, LAST_CONNECTION_FILE), 'utf8'))
    return check.Check(value) ? value : null
  } catch {
    return null
  }
}

export function keepLastConnection(dataDir: string, connection: ConnectionInfo): void {
  writeStateFile(path.join(dataDir, LAST_CONNECTION_FILE), `${JSON.stringify(connection)}\n`)
}

import { Value } from 'typebox/value'
import type { AgentLanApi, AgentLanEndpoint } from '../../protocol/agent.ts'
import { HubLanEndpoint } from '../../protocol/hub-messages.ts'

/** `https://<address>:<port>/`, an IPv6 address in brackets (RFC 3986 §3.2.2). */
export const lanUrl = (address: string, port: number): string =>
  `https://${address.includes(':') ? `[${address}]` : address}:${port}/`

function endpointOf(text: string | null): AgentLanEndpoint | null {
  if (text === null) return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  if (!Value.Check(HubLanEndpoint, value)) return null
  return {
    urls: value.addresses.map((address) => lanUrl(address, value.port)),
    cert_sha256: value.cert_sha256,
    spki_sha256: value.spki_sha256,
  }
}

/** An agent's `lan_api` from its columns `lan_api_enabled` and `lan_endpoint`. */
export const lanApiOf = (enabled: number, endpoint: string | null): AgentLanApi => ({
  enabled: enabled === 1,
  endpoint: endpointOf(endpoint),
})

import { type Static, Type } from 'typebox'

const DateTime = Type.String({ format: 'date-time' })

/** Where a till reaches a hub's LAN API (docs/lan-printing.md), while the hub reports that it serves it. */
export const AgentLanEndpoint = Type.Object(
  {
    urls: Type.Array(Type.String({ format: 'uri' }), {
      description: 'https://<address>:<port>/ for each LAN address of the hub (IPv6 in brackets)',
    }),
    cert_sha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: "SHA-256 of the hub's self-signed certificate (DER), in hex",
    }),
    spki_sha256: Type.String({
      pattern: '^[A-Za-z0-9+/]{43}=$',
      description: "SHA-256 of the certificate's public key (RFC 7469 pin, base64); survives a renewal",
    }),
  },
  { title: 'AgentLanEndpoint', additionalProperties: false },
)
export type AgentLanEndpoint = Static<typeof AgentLanEndpoint>

export const AgentLanApi = Type.Object(
  {
    enabled: Type.Boolean({ description: 'the hub may serve the print API on its LAN (off unless enabled)' }),
    endpoint: Type.Union([AgentLanEndpoint, Type.Null()], {
      description: 'where the hub serves it, as its latest state report said; null while it does not',
    }),
  },
  {
    title: 'AgentLanApi',
    additionalProperties: false,
    description:
      'Additive. The print API the hub serves on its LAN while the cloud is out of reach. A till calls one of ' +
      '`endpoint.urls` and pins the certificate by `cert_sha256`, or its key by `spki_sha256` (which survives ' +
      "the certificate's renewal), instead of checking it against a CA.",
  },
)
export type AgentLanApi = Static<typeof AgentLanApi>

/** A hub (the agent installed at a customer site). */
export const Agent = Type.Object(
  {
    agent_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    online: Type.Boolean({ description: 'holds an MQTT session with the cloud now' }),
    last_seen_at: Type.Union([DateTime, Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()], { description: 'agent software version it reported' }),
    created_at: DateTime,
    lan_api: AgentLanApi,
  },
  { title: 'Agent', additionalProperties: false },
)
export type Agent = Static<typeof Agent>

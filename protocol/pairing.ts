import { type Static, Type } from 'typebox'
import { StoredText } from './stored-text.ts'

/** POST /agent-api/v1/pairings: a hub without an identity asks to be paired (RFC 8628 §3.1). */
export const PairingRequest = Type.Object(
  {
    hostname: StoredText({ minLength: 0, maxLength: 255 }),
    agent_version: StoredText({ minLength: 0, maxLength: 64 }),
  },
  { additionalProperties: false, title: 'PairingRequest' },
)
export type PairingRequest = Static<typeof PairingRequest>

/** RFC 8628 §3.2, without verification_uri: the installer types the code on a partner's onboarding page. */
export const PairingResponse = Type.Object(
  {
    device_code: Type.String({
      description: 'the hub’s secret for polling; stored by the cloud only hashed',
    }),
    user_code: Type.String({
      pattern: '^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$',
      description: 'shown to the installer, who types it on the onboarding page',
    }),
    expires_in: Type.Integer({ description: 'seconds until both codes expire' }),
    interval: Type.Integer({ description: 'seconds the hub waits between polls' }),
  },
  { title: 'PairingResponse' },
)
export type PairingResponse = Static<typeof PairingResponse>

/** POST /agent-api/v1/pairings/token: the hub polls (RFC 8628 §3.4). */
export const PairingTokenRequest = Type.Object(
  { device_code: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false, title: 'PairingTokenRequest' },
)
export type PairingTokenRequest = Static<typeof PairingTokenRequest>

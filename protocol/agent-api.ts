import { type Static, Type } from 'typebox'

/** POST /agent-api/v1/enroll: a hub claims a single-use enrollment token. */
export const EnrollRequest = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 256 }),
    hostname: Type.String({ maxLength: 255 }),
    agent_version: Type.String({ maxLength: 64 }),
  },
  { additionalProperties: false },
)
export type EnrollRequest = Static<typeof EnrollRequest>

export const EnrollResponse = Type.Object(
  {
    agent_id: Type.String({ format: 'uuid' }),
    account_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    /** The hub's secret for MQTT (password) and HTTP (bearer); shown once, stored by the cloud only hashed. */
    credential: Type.String(),
    mqtt_url: Type.String(),
  },
  { title: 'EnrollResponse' },
)
export type EnrollResponse = Static<typeof EnrollResponse>

/** GET /agent-api/v1/connection: where an enrolled hub finds the broker (it knows only PUBLIC_URL). */
export const ConnectionInfo = Type.Object(
  {
    mqtt_url: Type.String(),
    keepalive_seconds: Type.Integer({ description: 'the cloud notices a lost hub within this many seconds' }),
  },
  { title: 'ConnectionInfo' },
)
export type ConnectionInfo = Static<typeof ConnectionInfo>

export const ENROLLMENT_STATES = ['pending', 'claimed', 'expired', 'revoked'] as const
export type EnrollmentState = (typeof ENROLLMENT_STATES)[number]

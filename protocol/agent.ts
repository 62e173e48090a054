import { type Static, Type } from 'typebox'

const DateTime = Type.String({ format: 'date-time' })

/** A hub (the agent installed at a customer site). */
export const Agent = Type.Object(
  {
    agent_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    online: Type.Boolean({ description: 'holds an MQTT session with the cloud now' }),
    last_seen_at: Type.Union([DateTime, Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()], { description: 'agent software version it reported' }),
    created_at: DateTime,
  },
  { title: 'Agent', additionalProperties: false },
)
export type Agent = Static<typeof Agent>

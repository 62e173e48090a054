import type { AuthenticateError, Client, PublishPacket, Subscription } from 'aedes'
import type { Logger } from 'pino'
import { hashSecret } from '../../print-api/secrets.ts'
import { HUB_TOPICS, hubTopic, parseHubTopic } from '../../protocol/hub-messages.ts'
import type { AgentIdentity } from '../storage/agents.ts'

/**
 * Who may do what on the broker, in one place, deny by default. A hub authenticates with its agent id as
 * username and client id and its credential as password; it may publish only its own `hub`-direction topics
 * and subscribe only to its own `cloud`-direction topics, with no wildcards. Everything else is refused and
 * logged. The cloud itself publishes in-process (client null) and is not subject to this.
 */
export interface BrokerPolicyDeps {
  findAgentByCredential(credentialHash: Buffer): AgentIdentity | undefined
  logger: Logger
}

/** MQTT 3.1.1 §3.2.2.3 CONNACK return codes. */
const IDENTIFIER_REJECTED = 2
const BAD_USERNAME_OR_PASSWORD = 4

function refusal(returnCode: 2 | 4 | 5, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError
}

const agentOf = new WeakMap<Client, AgentIdentity>()

export function createBrokerPolicy({ findAgentByCredential, logger }: BrokerPolicyDeps) {
  return {
    authenticate(
      client: Client,
      username: Readonly<string> | undefined,
      password: Readonly<Buffer> | undefined,
      done: (error: AuthenticateError | null, success: boolean | null) => void,
    ) {
      const agent = password ? findAgentByCredential(hashSecret(password.toString('utf8'))) : undefined
      if (!agent || agent.agent_id !== username) {
        logger.warn({ client_id: client.id, username }, 'mqtt connect refused: bad credentials')
        done(refusal(BAD_USERNAME_OR_PASSWORD, 'bad username or password'), false)
        return
      }
      if (client.id !== agent.agent_id) {
        logger.warn(
          { client_id: client.id, agent_id: agent.agent_id },
          'mqtt connect refused: client id is not the agent id',
        )
        done(refusal(IDENTIFIER_REJECTED, 'client id must be the agent id'), false)
        return
      }
      agentOf.set(client, agent)
      done(null, true)
    },

    authorizePublish(client: Client | null, packet: PublishPacket, done: (error?: Error | null) => void) {
      if (client === null) return done(null)
      const agent = agentOf.get(client)
      const target = parseHubTopic(packet.topic)
      if (agent && target && target.agentId === agent.agent_id && HUB_TOPICS[target.topic].from === 'hub') {
        return done(null)
      }
      logger.warn({ agent_id: agent?.agent_id, topic: packet.topic }, 'mqtt publish refused')
      done(new Error('publish not authorized'))
    },

    authorizeSubscribe(
      client: Client | null,
      subscription: Subscription,
      done: (error: Error | null, sub: Subscription | null) => void,
    ) {
      const agent = client ? agentOf.get(client) : undefined
      const allowed =
        agent !== undefined &&
        (Object.keys(HUB_TOPICS) as (keyof typeof HUB_TOPICS)[]).some(
          (topic) =>
            HUB_TOPICS[topic].from === 'cloud' && subscription.topic === hubTopic(agent.agent_id, topic),
        )
      if (allowed) return done(null, subscription)
      logger.warn({ agent_id: agent?.agent_id, topic: subscription.topic }, 'mqtt subscribe refused')
      // A null subscription is answered with the SUBACK failure code 0x80 (MQTT 3.1.1 §3.9.3).
      done(null, null)
    },
  }
}

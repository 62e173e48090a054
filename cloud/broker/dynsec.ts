import { randomUUID } from 'node:crypto'
import type { MqttClient } from 'mqtt'
import { hubRoleAcls } from './mosquitto-config.ts'

/**
 * Mosquitto's dynamic-security plugin driven over its `$CONTROL/dynamic-security/v1` topic (Mosquitto 2.0
 * docs, "Dynamic Security plugin": commands in, responses on `…/v1/response`, matched by correlationData).
 * The cloud keeps one client and one role per hub: the client is the hub's agent id as user name and client
 * id with its credential as password; the role allows only `hubs/<agent id>/…` (mosquitto-config.ts).
 */
const CONTROL_TOPIC = '$CONTROL/dynamic-security/v1'
export const CONTROL_RESPONSE_TOPIC = `${CONTROL_TOPIC}/response`

interface DynsecResponse {
  command: string
  error?: string
  correlationData?: string
  data?: unknown
}

/** Agent ids are uuids; anything with MQTT wildcards or separators must never become a topic. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/

export const hubRole = (agentId: string) => `hub-${agentId}`

export class DynsecError extends Error {}

export class DynsecControl {
  readonly #client: MqttClient
  readonly #timeoutMs: number
  readonly #waiting = new Map<string, { resolve(response: DynsecResponse): void; timer: NodeJS.Timeout }>()

  /** `client` must be subscribed to CONTROL_RESPONSE_TOPIC and pass its messages to `onResponse`. */
  constructor(client: MqttClient, timeoutMs = 10_000) {
    this.#client = client
    this.#timeoutMs = timeoutMs
  }

  onResponse(payload: Buffer): void {
    let responses: DynsecResponse[] = []
    try {
      responses = (JSON.parse(payload.toString('utf8')) as { responses?: DynsecResponse[] }).responses ?? []
    } catch {
      return
    }
    for (const response of responses) {
      const waiter = response.correlationData ? this.#waiting.get(response.correlationData) : undefined
      if (!waiter) continue
      clearTimeout(waiter.timer)
      this.#waiting.delete(response.correlationData!)
      waiter.resolve(response)
    }
  }

  /** Sends the commands in one message; each answer in order (`error` set when the plugin refused it). */
  async run(commands: { command: string; [field: string]: unknown }[]): Promise<DynsecResponse[]> {
    if (!this.#client.connected) throw new DynsecError('not connected to the broker')
    const tagged = commands.map((command) => ({ ...command, correlationData: randomUUID() }))
    const answers = tagged.map(
      (command) =>
        new Promise<DynsecResponse>((resolve, reject) => {
          const timer = setTimeout(() => {
            this.#waiting.delete(command.correlationData)
            reject(new DynsecError(`the broker did not answer ${command.command}`))
          }, this.#timeoutMs)
          this.#waiting.set(command.correlationData, { resolve, timer })
        }),
    )
    try {
      await this.#client.publishAsync(CONTROL_TOPIC, JSON.stringify({ commands: tagged }), { qos: 1 })
    } catch (error) {
      for (const command of tagged) {
        clearTimeout(this.#waiting.get(command.correlationData)?.timer)
        this.#waiting.delete(command.correlationData)
      }
      throw error
    }
    return Promise.all(answers)
  }

  /**
   * Makes sure the hub has its client and role. An existing client is left as it is (its credential does not
   * change while the hub is enrolled), so a hub's every start costs the broker no write of its state.
   */
  async provisionHub(agentId: string, credential: string): Promise<'created' | 'existed'> {
    if (!SAFE_ID.test(agentId))
      throw new DynsecError(`agent id ${JSON.stringify(agentId)} cannot be a topic level`)
    const [role, client] = await this.run([
      {
        command: 'createRole',
        rolename: hubRole(agentId),
        acls: hubRoleAcls(agentId).map((acl) => ({ priority: 0, ...acl })),
      },
      {
        command: 'createClient',
        username: agentId,
        password: credential,
        clientid: agentId,
        textname: `hub ${agentId}`,
        roles: [{ rolename: hubRole(agentId) }],
      },
    ])
    if (role?.error && !/already exists/i.test(role.error)) throw new DynsecError(`createRole: ${role.error}`)
    if (client?.error) {
      if (/already exists/i.test(client.error)) return 'existed'
      throw new DynsecError(`createClient: ${client.error}`)
    }
    return 'created'
  }

  /**
   * Deletes the hubs' clients and roles; the plugin closes their connections at once. Which of them had a
   * client (the others were deleted before, or never provisioned).
   */
  async removeHubs(agentIds: string[]): Promise<string[]> {
    const removed: string[] = []
    for (let i = 0; i < agentIds.length; i += 50) {
      const batch = agentIds.slice(i, i + 50).filter((id) => SAFE_ID.test(id))
      if (batch.length === 0) continue
      const answers = await this.run(
        batch.flatMap((agentId) => [
          { command: 'deleteClient', username: agentId },
          { command: 'deleteRole', rolename: hubRole(agentId) },
        ]),
      )
      batch.forEach((agentId, index) => {
        const answer = answers[index * 2]
        if (answer && !answer.error) removed.push(agentId)
        else if (answer?.error && !/not found/i.test(answer.error))
          throw new DynsecError(`deleteClient: ${answer.error}`)
      })
    }
    return removed
  }
}

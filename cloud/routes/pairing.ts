import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { ApiError } from '../../print-api/api-error.ts'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import { EnrollResponse } from '../../protocol/agent-api.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { NoStore } from '../../protocol/http-headers.ts'
import { PairingRequest, PairingResponse, PairingTokenRequest } from '../../protocol/pairing.ts'
import { provisionEnrolledHub } from '../broker/hub-provisioning.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { generateUserCode, normalizeUserCode } from '../pairing/user-code.ts'
import { type AgentApiOptions, brokerUrlFor } from './agent-api.ts'

/** How long a pairing's codes live (RFC 8628 §3.2 expires_in) and how often the hub polls (interval). */
export const PAIRING_TTL_SECONDS = 600
export const PAIRING_INTERVAL_SECONDS = 5

/** Draws left when a fresh user code collides with a live one (20^8 codes: practically never more than one). */
const USER_CODE_DRAWS = 5

/**
 * Pairing in the style of RFC 8628 (device authorization grant): a hub without an identity asks for a pairing,
 * shows the user code, and polls until an installer typed that code on an onboarding page (routes/onboarding.ts).
 */
export const pairingRoutes: FastifyPluginAsync<AgentApiOptions> = async (app, options) => {
  const { storage } = options
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.post(
    '/agent-api/v1/pairings',
    {
      schema: {
        operationId: 'createAgentPairing',
        tags: ['Agents'],
        summary: 'A hub without an identity asks for a pairing code (RFC 8628 device authorization request)',
        body: PairingRequest,
        response: {
          201: jsonResponse('The codes: the hub keeps device_code and shows user_code.', PairingResponse, {
            'Cache-Control': NoStore,
          }),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      // Unauthenticated and creating a secret: counted as the token endpoints count failures, per address.
      await app.tokenFailures.check(request)
      await app.tokenFailures.record(request, 'agent-pairings')
      const deviceCode = generateSecret('dvc')
      const now = Date.now()
      for (let draw = 0; draw < USER_CODE_DRAWS; draw++) {
        const userCode = generateUserCode()
        const created = await storage.pairings.create(
          {
            deviceCodeHash: hashSecret(deviceCode),
            userCodeHash: hashSecret(normalizeUserCode(userCode) ?? userCode),
            hostname: request.body.hostname,
            expiresAt: now + PAIRING_TTL_SECONDS * 1000,
            intervalSeconds: PAIRING_INTERVAL_SECONDS,
          },
          now,
        )
        if (created) {
          return reply.code(201).send({
            device_code: deviceCode,
            user_code: userCode,
            expires_in: PAIRING_TTL_SECONDS,
            interval: PAIRING_INTERVAL_SECONDS,
          })
        }
      }
      throw new Error('no free pairing code after several draws')
    },
  )

  api.post(
    '/agent-api/v1/pairings/token',
    {
      schema: {
        operationId: 'pollAgentPairing',
        tags: ['Agents'],
        summary: 'A pairing hub polls for its credential (RFC 8628 device access token request)',
        body: PairingTokenRequest,
        response: {
          200: jsonResponse(
            'Paired: the hub keeps this credential, exactly as an enrollment gives it.',
            EnrollResponse,
            { 'Cache-Control': NoStore },
          ),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      await app.tokenFailures.check(request)
      const credential = generateSecret('hub')
      const polled = await storage.pairings.poll(
        hashSecret(request.body.device_code),
        hashSecret(credential),
        Date.now(),
      )
      switch (polled.outcome) {
        case 'pending':
          throw new ApiError('authorization_pending', 'Nobody has typed this pairing code yet.')
        case 'slow_down':
          throw new ApiError(
            'slow_down',
            `Polled too soon; wait ${polled.intervalSeconds} s between polls.`,
            {
              interval: polled.intervalSeconds,
            },
          )
        case 'expired':
          throw new ApiError('expired_token', 'The pairing code expired; ask for a new one.')
        case 'unknown':
          await app.tokenFailures.record(request, null)
          throw new ApiError('pairing_device_code_invalid', 'No pairing has this device_code.')
      }
      request.log.info({ agent_id: polled.agentId }, 'hub paired')
      await provisionEnrolledHub(options.provisionHub, polled.agentId, credential, request.log)
      return {
        agent_id: polled.agentId,
        account_id: polled.accountId,
        name: polled.name,
        credential,
        mqtt_url: brokerUrlFor(request, options),
      }
    },
  )
}

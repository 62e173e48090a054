import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import { ConnectionInfo, EnrollRequest, EnrollResponse } from '../../protocol/agent-api.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { ContentSha256, NoStore } from '../../protocol/http-headers.ts'
import {
  type ProvisionHub,
  provisionConnectingHub,
  provisionEnrolledHub,
} from '../broker/hub-provisioning.ts'
import { binaryResponse, jsonResponse } from '../openapi/responses.ts'
import { hubOf } from '../plugins/authentication.ts'
import type { BlobStore } from '../storage/blob-store.ts'
import type { Storage } from '../storage/storage.ts'

export interface AgentApiOptions {
  storage: Storage
  blobs: BlobStore
  /** MQTT_PUBLIC_URL; empty: the host name the hub used to reach the cloud, with the broker's port. */
  mqttPublicUrl: string
  mqttScheme: 'mqtt' | 'mqtts'
  mqttPort: number
  keepaliveSeconds: number
  /** External broker (MQTT_URL): gives a hub its broker client (cloud/broker/hub-provisioning.ts). */
  provisionHub?: ProvisionHub
}

/**
 * Where a hub reaches the broker: MQTT_PUBLIC_URL when set, else the host the hub itself used to reach this
 * API (the Host header, or X-Forwarded-Host behind a trusted proxy) with the broker's port: an address that
 * works from where the hub is, unlike PUBLIC_URL's default `localhost`.
 */
export function brokerUrlFor(request: FastifyRequest, options: AgentApiOptions): string {
  if (options.mqttPublicUrl) return options.mqttPublicUrl
  let hostname = 'localhost'
  try {
    hostname = new URL(`http://${request.host}`).hostname || hostname
  } catch {
    // A Host header that is no host name: fall back to localhost (the hub then logs what to set).
  }
  return `${options.mqttScheme}://${hostname}:${options.mqttPort}`
}

const CLAIM_ERRORS = {
  unknown: ['enrollment_token_invalid', 'No enrollment has this token.'],
  already_claimed: ['enrollment_claimed', 'This enrollment token was already used.'],
  expired: ['enrollment_expired', 'This enrollment token has expired; ask for a new one.'],
  revoked: ['enrollment_revoked', 'This enrollment was revoked; ask for a new one.'],
} as const

/** The hubs' own API: enrollment, where the broker is, and document downloads with the hub's credential. */
export const agentApiRoutes: FastifyPluginAsync<AgentApiOptions> = async (app, options) => {
  const { storage, blobs, keepaliveSeconds } = options
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.post(
    '/agent-api/v1/enroll',
    {
      schema: {
        operationId: 'enrollAgent',
        tags: ['Agents'],
        summary: 'A hub claims a single-use enrollment token and receives its credential',
        body: EnrollRequest,
        response: {
          201: jsonResponse(
            'Enrolled: the hub keeps this credential; the cloud stores only its hash.',
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
      const claimed = await storage.enrollments.claim(
        hashSecret(request.body.token),
        hashSecret(credential),
        request.body.hostname,
        new Date(),
      )
      if (claimed.outcome !== 'claimed') {
        if (claimed.outcome === 'unknown') await app.tokenFailures.record(request, null)
        const [code, message] = CLAIM_ERRORS[claimed.outcome]
        throw new ApiError(code, message)
      }
      request.log.info(
        { agent_id: claimed.agentId, enrollment_id: claimed.enrollment.enrollment_id },
        'hub enrolled',
      )
      await provisionEnrolledHub(options.provisionHub, claimed.agentId, credential, request.log)
      return reply.code(201).send({
        agent_id: claimed.agentId,
        account_id: claimed.enrollment.account_id,
        name: claimed.enrollment.name,
        credential,
        mqtt_url: brokerUrlFor(request, options),
      })
    },
  )

  api.get(
    '/agent-api/v1/connection',
    {
      config: { hubAuth: true },
      schema: {
        operationId: 'getAgentConnection',
        tags: ['Agents'],
        summary: 'Where an enrolled hub reaches the MQTT broker',
        response: {
          200: jsonResponse('Where the hub reaches the broker.', ConnectionInfo),
          '4xx': ErrorBody,
        },
      },
    },
    async (request) => {
      await provisionConnectingHub(options.provisionHub, hubOf(request).agent_id, request)
      return { mqtt_url: brokerUrlFor(request, options), keepalive_seconds: keepaliveSeconds }
    },
  )

  api.get(
    '/agent-api/v1/documents/:documentId',
    {
      config: { hubAuth: true },
      schema: {
        operationId: 'downloadAgentDocument',
        tags: ['Agents'],
        summary: 'A hub downloads the document of a job it prints',
        params: Type.Object({ documentId: Type.String({ format: 'uuid' }) }),
        response: {
          200: binaryResponse('The document bytes, as stored.', { 'X-Content-SHA256': ContentSha256 }),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const hub = hubOf(request)
      const found = (await storage.printJobs.agentMayRead(hub.agent_id, request.params.documentId))
        ? await storage.documents.findWithContent(hub.account_id, request.params.documentId)
        : undefined
      const document = found?.document
      // A small RAW document's bytes are in its row (migration 24); the others in the blob store.
      const kept = found?.content
      const bytes = kept
        ? { stream: kept, size: kept.length }
        : document && (await blobs.open(document.sha256))
      if (!document || !bytes) throw new ApiError('document_not_found', 'No such document for this hub.')
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(bytes.size))
        .header('x-content-sha256', document.sha256)
        .send(bytes.stream)
    },
  )
}

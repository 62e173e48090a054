import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { ProvisionedManagedAccount } from '../../../protocol/partner.ts'
import { registerApplication, type TestApplication } from '../developer/applications.ts'
import type { TestCloud } from '../test-cloud.ts'

export const RETURN_URI = 'https://pos.example/onboarding/done'

/** A partner application and requests signed with a fresh assertion each. */
export interface Partner extends TestApplication {
  request(
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    options?: { payload?: unknown; idempotencyKey?: string },
  ): Promise<LightMyRequestResponse>
  /** Provisions an account (asserting the 201) under a fresh key. */
  provision(externalCustomerId?: string, name?: string): Promise<ProvisionedManagedAccount>
}

export const accountRequest = (externalCustomerId: string, name = 'Corner shop') => ({
  external_customer_id: externalCustomerId,
  name,
  permissions: ['printers:read', 'print_jobs:read'],
  agent_onboarding: { return_uri: RETURN_URI, state: randomUUID() },
})

export async function registerPartner(
  cloud: TestCloud,
  partner = true,
  name = 'POS vendor',
): Promise<Partner> {
  const app = await registerApplication(cloud.storage, cloud.config.publicUrl, { partner, name })
  const request: Partner['request'] = async (method, url, options = {}) =>
    cloud.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${await app.assertion()}`,
        ...(options.idempotencyKey !== undefined && { 'idempotency-key': options.idempotencyKey }),
      },
      ...(options.payload !== undefined && { payload: options.payload as object }),
    })
  return {
    ...app,
    request,
    async provision(externalCustomerId = randomUUID(), name = 'Corner shop') {
      const res = await request('POST', '/partner-api/v1/accounts', {
        payload: accountRequest(externalCustomerId, name),
        idempotencyKey: randomUUID(),
      })
      expect(res.statusCode, res.body).toBe(201)
      return res.json() as ProvisionedManagedAccount
    },
  }
}

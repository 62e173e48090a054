import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../print-api/api-error.ts'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { ErrorBody } from '../../protocol/errors.ts'
import { NoStore, PragmaNoCache } from '../../protocol/http-headers.ts'
import { InstallationToken, InstallationTokenRequest } from '../../protocol/partner.ts'
import { jsonResponse } from '../openapi/responses.ts'
import { applicationOf, INSTALLATION_TOKEN_PREFIX } from '../plugins/authentication.ts'
import type { Storage } from '../storage/storage.ts'

export interface DeveloperApiOptions {
  storage: Storage
  accessTokenTtlSeconds: number
}

/** The permissions asked for, checked against those the installation was approved for (all when omitted). */
export function requestedPermissions(
  asked: readonly string[] | undefined,
  approved: readonly Scope[],
): Scope[] {
  if (asked === undefined) return [...approved]
  const notApproved = asked.filter((p) => !(approved as readonly string[]).includes(p))
  if (notApproved.length > 0 || asked.length === 0) {
    throw new ApiError(
      'permissions_not_approved',
      asked.length === 0
        ? 'permissions must name at least one approved permission (or be omitted for all of them).'
        : `Not approved for this installation: ${notApproved.join(', ')}.`,
      { not_approved: notApproved, approved: [...approved] },
    )
  }
  // In the catalogue's order, each once.
  return SCOPES.filter((scope) => asked.includes(scope))
}

/** Spec: Developer platform. An application exchanges an assertion for an installation access token. */
export const developerApiRoutes: FastifyPluginAsync<DeveloperApiOptions> = async (
  app,
  { storage, accessTokenTtlSeconds },
) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  api.post(
    '/developer-api/v1/app-installations/:installationId/access-tokens',
    {
      config: { applicationAuth: 'developer' },
      // The body is optional (spec): none asks for every approved permission.
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        operationId: 'createInstallationAccessToken',
        tags: ['Developer platform'],
        summary: 'Issue an access token for an installation of the calling application',
        description:
          'Authenticated by an application assertion (see the applicationAssertion security scheme). The ' +
          "token works on /api/v1 for the installation's account with the permissions granted here; " +
          'issuing one does not revoke the others, and no refresh token is issued.',
        params: Type.Object({ installationId: Type.String({ format: 'uuid' }) }),
        body: InstallationTokenRequest,
        response: {
          200: jsonResponse('The installation access token; shown once.', InstallationToken, {
            'Cache-Control': NoStore,
            Pragma: PragmaNoCache,
          }),
          '4xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      const application = applicationOf(request)
      const installation = await storage.applications.findInstallation(request.params.installationId)
      // Another application's installation is not disclosed.
      if (!installation || installation.app_id !== application.app_id) {
        throw new ApiError('installation_not_found', 'This application has no installation with that id.')
      }
      if (!installation.active) {
        throw new ApiError('installation_inactive', 'The installation is inactive; it gets no tokens.')
      }
      const permissions = requestedPermissions(request.body?.permissions, installation.permissions)
      const token = generateSecret(INSTALLATION_TOKEN_PREFIX)
      const expiresAt = Date.now() + accessTokenTtlSeconds * 1000
      await storage.applications.storeToken(hashSecret(token), {
        installation_id: installation.installation_id,
        account_id: installation.account_id,
        scopes: permissions,
        expires_at: expiresAt,
      })
      request.log.info(
        { app_id: application.app_id, installation_id: installation.installation_id },
        'installation token issued',
      )
      return {
        access_token: token,
        token_type: 'Bearer' as const,
        expires_in: accessTokenTtlSeconds,
        expires_at: new Date(expiresAt).toISOString(),
        permissions,
        installation_id: installation.installation_id,
        account_id: installation.account_id,
      }
    },
  )
}

import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'
import { SCOPES, type Scope } from '../../protocol/enums.ts'
import { describeBase64Text, mergeLoneAnyOf, nameResponseSchemas, typeEnums } from '../openapi/components.ts'
import {
  describeOperation,
  noteRouteFacts,
  type Operation,
  SHARED_COMPONENTS,
} from '../openapi/operations.ts'
import { webhooksOfDocument } from '../openapi/webhooks.ts'

const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'printers:read': 'list agents and printers',
  'documents:write': 'upload documents, and supply them by URL or Base64',
  'print_jobs:write': 'create and cancel print jobs',
  'print_jobs:read': 'read and list print jobs',
  'webhooks:write': 'create, list, change and delete webhook endpoints; read and resend their deliveries',
}

/** Spec (Authentication, model 2): the claims the service leaves open, as this service checks them. */
const APPLICATION_ASSERTION =
  'A developer application assertion (RFC 7523 §3 in shape): a JWT signed RS256 with a key registered for ' +
  'the application (`cloud app create`, `cloud app key add`), with header `kid` naming the key (optional: ' +
  'without it every key is tried) and claims `iss` = the app id, `aud` = this service’s base URL ' +
  `(${'`'}servers[0].url${'`'}), \`iat\`, \`exp\` at most 600 s after \`iat\` (60 s of clock skew allowed) and a ` +
  'unique `jti`. Each assertion is accepted once. It authenticates the developer and partner APIs only; ' +
  '/api/v1 refuses it (use an installation access token there).'

/**
 * The OpenAPI 3.1 document, generated from the route schemas (the same TypeBox schemas that validate
 * requests), served at GET /openapi.json. Each operation's security comes from its route's `config`; the
 * headers and error answers every endpoint shares are added here. Register before the routes.
 */
export const openapiPlugin = fp<{ publicUrl: string }>(
  async (app, { publicUrl }) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Print Service API',
          version: '1.0.0',
          description:
            'Print PDFs and raw printer-language payloads on printers attached to a hub. Errors use one body ' +
            '(error, error_code, message, details); every response carries X-Request-Id.',
          // A private product: no licence is granted.
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        servers: [{ url: publicUrl }],
        components: {
          ...SHARED_COMPONENTS,
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description:
                'An access token from POST /oauth/token; each operation lists the scopes it needs.',
            },
            clientCredentials: {
              type: 'oauth2',
              description: 'The same access token, described as the OAuth 2.0 flow that issues it.',
              flows: {
                clientCredentials: {
                  tokenUrl: `${publicUrl}/oauth/token`,
                  scopes: Object.fromEntries(SCOPES.map((scope) => [scope, SCOPE_DESCRIPTIONS[scope]])),
                },
              },
            },
            clientBasic: {
              type: 'http',
              scheme: 'basic',
              description:
                'An API client id and secret (RFC 6749 §2.3.1), instead of sending them in the body.',
            },
            applicationAssertion: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: APPLICATION_ASSERTION,
            },
            hubCredential: {
              type: 'http',
              scheme: 'bearer',
              description: 'A hub credential from POST /agent-api/v1/enroll (hubs only).',
            },
          },
        },
      },
      transform: ({ schema, url, route }) => ({ ...noteRouteFacts(schema, route.config ?? {}), url }),
      transformObject: (generated) => {
        if (!('openapiObject' in generated)) return generated.swaggerObject
        // A copy: the generated document may share objects with the live route schemas.
        const doc = structuredClone(generated.openapiObject) as Parameters<typeof nameResponseSchemas>[0]
        // What the service sends: each webhook event (OpenAPI 3.1 `webhooks`).
        doc.webhooks = webhooksOfDocument() as NonNullable<typeof doc.webhooks>
        // Names first: the error answers describeOperation adds refer to the Error component named here.
        nameResponseSchemas(doc)
        for (const methods of Object.values(doc.paths)) {
          for (const op of Object.values(methods)) describeOperation(op as Operation)
        }
        mergeLoneAnyOf(doc)
        typeEnums(doc)
        describeBase64Text(doc)
        return doc
      },
    })
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  },
  { name: 'openapi' },
)

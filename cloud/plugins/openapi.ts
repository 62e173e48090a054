import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'

/**
 * The OpenAPI 3.1 document, generated from the route schemas (the same TypeBox schemas that validate
 * requests), served at GET /openapi.json. Register before the routes so that it sees them.
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
        },
        servers: [{ url: publicUrl }],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description: 'Access token from POST /oauth/token',
            },
            clientCredentials: {
              type: 'oauth2',
              flows: {
                clientCredentials: {
                  tokenUrl: `${publicUrl}/oauth/token`,
                  scopes: {
                    'printers:read': 'list agents and printers',
                    'documents:write': 'upload documents',
                    'print_jobs:write': 'create print jobs',
                    'print_jobs:read': 'read print jobs',
                  },
                },
              },
            },
          },
        },
      },
    })
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  },
  { name: 'openapi' },
)

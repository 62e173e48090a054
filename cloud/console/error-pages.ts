import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { html, renderPage, sendPage } from './layout.ts'

const CSRF_ERRORS = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN'])

function errorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  text: string,
) {
  const user = request.consoleUser ?? null
  return sendPage(
    reply,
    status,
    renderPage({
      title,
      user,
      // The sign-out form needs a token; a request whose session is gone has none to give.
      ...(user && request.session && { csrfToken: reply.generateCsrf() }),
      body: html`<h1>${title}</h1>
<p>${text}</p>
<p><a href="/console">Back to the console</a></p>`,
    }),
  )
}

/**
 * The console's errors as pages, not the API's JSON: a refused CSRF token (403), a route that does not exist
 * (404), a malformed request (4xx), and anything unexpected (500, logged).
 */
const plugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code && CSRF_ERRORS.has(error.code)) {
      return errorPage(
        request,
        reply,
        403,
        'Form expired',
        'This form was not sent from a page of this session (it may have been open since before you signed in). Go back, reload the page and try again.',
      )
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      return errorPage(request, reply, status, 'Request refused', 'The request was malformed or too large.')
    }
    request.log.error({ err: error }, 'console request failed')
    return errorPage(
      request,
      reply,
      500,
      'Something went wrong',
      'The page could not be shown. Try again shortly.',
    )
  })
  app.setNotFoundHandler((request, reply) =>
    errorPage(request, reply, 404, 'Not found', 'There is no such page in the console.'),
  )
}

export const consoleErrorPages = fp(plugin, { name: 'console-error-pages' })

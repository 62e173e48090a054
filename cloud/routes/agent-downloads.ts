import type { FileHandle } from 'node:fs/promises'
import { open } from 'node:fs/promises'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { Catalog, INSTALLER_FILENAME } from '../../ota/catalog.ts'
import { ApiError } from '../../print-api/api-error.ts'
import { binaryResponse, jsonResponse } from '../openapi/responses.ts'
import { parseRange } from '../releases/byte-range.ts'
import { CatalogUnavailable, ReleaseCatalog, type ServedCatalog } from '../releases/release-catalog.ts'
import type { ServedCatalogRepository } from '../storage/served-catalogs.ts'

/**
 * Agent downloads (spec: Agent downloads): the signed release catalog and the installers it names, without
 * credentials, each request counted against its address's quota (plugins/rate-limit.ts: every route without
 * a hub credential is). The catalog is the file `ota publish` signed, served byte for byte with its signature
 * in X-Catalog-Signature (docs/releases.md: The catalog, for checking it with openssl).
 */

const CATALOG_CACHE = 'public, max-age=60'
/** An installer's name carries its version and a published file never changes (ota/publish.ts refuses). */
const INSTALLER_CACHE = 'public, max-age=86400'
const RETRY_CATALOG_SECONDS = '300'

const header = (description: string) => Type.String({ description })
const CATALOG_HEADERS = {
  ETag: header('A strong validator of the catalog: send it back in If-None-Match for a 304.'),
  'Cache-Control': header(`\`${CATALOG_CACHE}\`.`),
  'X-Catalog-Signature': header(
    'The Ed25519 signature of the response body, byte for byte, in Base64, by the release key whose public half ships in every hub package (/opt/print-hub/current/share/release-key.pem).',
  ),
  'X-Catalog-Key-Id': header('The release key: the first 16 hex digits of SHA-256 of its DER public key.'),
}
const INSTALLER_HEADERS = {
  'Content-Length': header('The size of the bytes sent.'),
  'Content-Disposition': header('`attachment` with the installer’s file name.'),
  'Accept-Ranges': header('`bytes`: a single range may be asked for.'),
  ETag: header('The installer’s SHA-256, quoted.'),
  'X-Content-SHA256': header('SHA-256 of the whole installer, in hex, as the catalog lists it.'),
}

const catalogUnavailable = () =>
  new ApiError('release_catalog_unavailable', 'The release catalog is unavailable.', undefined, {
    'retry-after': RETRY_CATALOG_SECONDS,
  })

/** RFC 9110 §13.1.2: whether If-None-Match names this entity tag (weak comparison) or is `*`. */
function noneMatch(request: FastifyRequest, etag: string): boolean {
  const value = request.headers['if-none-match']
  if (!value) return false
  const tags = value.split(',').map((t) => t.trim().replace(/^W\//, ''))
  return tags.includes('*') || tags.includes(etag)
}

/** 304 Not Modified (RFC 9110 §15.4.5): the validators already set, no body. */
const notModified = (reply: FastifyReply) => reply.code(304).send()

export const agentDownloadRoutes: FastifyPluginAsync<{
  releasesDir: string
  servedCatalogs: ServedCatalogRepository
}> = async (app, options) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  const releases = new ReleaseCatalog(options.releasesDir, options.servedCatalogs)

  /** The verified catalog; a 503 when there is none. */
  const catalogFor = async (request: FastifyRequest) => {
    try {
      return await releases.current()
    } catch (error) {
      if (!(error instanceof CatalogUnavailable)) throw error
      request.log.error({ reason: error.message }, 'release catalog unavailable')
      throw catalogUnavailable()
    }
  }

  api.get(
    '/agent-download-api/v1/releases',
    {
      schema: {
        operationId: 'getAgentReleases',
        tags: ['Agent downloads'],
        summary: 'The signed catalog of hub releases: the current one and its installers',
        description:
          'No credentials. The body is the catalog as signed, byte for byte; verify X-Catalog-Signature over ' +
          'it with the release key before trusting it, and each installer’s SHA-256 before installing it. ' +
          '304 for an If-None-Match naming the current ETag; 503 `release_catalog_unavailable` when no ' +
          'release is published, the stored catalog fails its signature check, or it is older than one this ' +
          'cloud served before (a lower serial). Hubs refuse a catalog past its `expires_at`.',
        response: { 200: jsonResponse('The signed release catalog.', Catalog, CATALOG_HEADERS) },
      },
    },
    async (request, reply) => {
      const served = await catalogFor(request)
      return sendCatalog(request, reply, served)
    },
  )

  api.get(
    '/agent-download-api/v1/installers/:filename',
    {
      schema: {
        operationId: 'downloadAgentInstaller',
        tags: ['Agent downloads'],
        summary: 'An installer named in the release catalog',
        description:
          'No credentials. Only file names the current catalog lists (any release in it); anything else is ' +
          'a 404 `installer_not_found`. A single `Range: bytes=…` gives 206 with Content-Range, or 416 ' +
          '`range_not_satisfiable`; several ranges get the whole file. Check the SHA-256 before installing.',
        params: Type.Object({
          filename: Type.String({
            description: 'A file name from the catalog, such as print-hub_1.2.0_arm64.deb.',
          }),
        }),
        response: {
          200: binaryResponse('The installer.', INSTALLER_HEADERS),
          206: binaryResponse('The range of the installer that was asked for.', {
            ...INSTALLER_HEADERS,
            'Content-Range': header('`bytes first-last/size` (RFC 9110 §14.4).'),
          }),
        },
      },
    },
    async (request, reply) => {
      const served = await catalogFor(request)
      const { filename } = request.params
      const entry = INSTALLER_FILENAME.test(filename) ? served.installers.get(filename) : undefined
      const notFound = () =>
        new ApiError('installer_not_found', 'No installer of that name is in the release catalog.')
      if (!entry) throw notFound()
      let handle: FileHandle
      try {
        handle = await open(entry.file, 'r')
      } catch (error) {
        request.log.error({ err: error, filename }, 'installer listed in the catalog but not readable')
        throw notFound()
      }
      return sendInstaller(request, reply, entry, handle)
    },
  )
}

/** The catalog's signed text as it is (a string is not serialized again), or a 304. */
function sendCatalog(request: FastifyRequest, reply: FastifyReply, served: ServedCatalog): FastifyReply {
  reply.header('etag', served.etag).header('cache-control', CATALOG_CACHE)
  if (noneMatch(request, served.etag)) return notModified(reply)
  return reply
    .header('x-catalog-signature', served.signature)
    .header('x-catalog-key-id', served.keyId)
    .type('application/json; charset=utf-8')
    .send(served.text)
}

async function sendInstaller(
  request: FastifyRequest,
  reply: FastifyReply,
  entry: NonNullable<ReturnType<ServedCatalog['installers']['get']>>,
  handle: FileHandle,
): Promise<FastifyReply> {
  const { installer } = entry
  let keep = false
  try {
    const size = (await handle.stat()).size
    if (size !== installer.size_bytes) {
      request.log.error(
        { filename: installer.filename, size, catalog_size: installer.size_bytes },
        'installer on disk differs from the catalog',
      )
      throw catalogUnavailable()
    }
    const etag = `"${installer.sha256}"`
    reply
      .header('accept-ranges', 'bytes')
      .header('etag', etag)
      .header('cache-control', INSTALLER_CACHE)
      .header('x-content-sha256', installer.sha256)
      .header('content-disposition', `attachment; filename="${installer.filename}"`)
    if (noneMatch(request, etag)) return notModified(reply)
    // RFC 9110 §13.1.5: a Range under an If-Range that does not match asks for the whole file.
    const ifRange = request.headers['if-range']
    const range = ifRange === undefined || ifRange === etag ? parseRange(request.headers.range, size) : null
    if (range === 'unsatisfiable') {
      throw new ApiError('range_not_satisfiable', `The installer has ${size} bytes.`, undefined, {
        'content-range': `bytes */${size}`,
      })
    }
    const { start, end } = range ?? { start: 0, end: size - 1 }
    if (range) reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`)
    keep = true
    return reply
      .type('application/octet-stream')
      .header('content-length', String(end - start + 1))
      .send(handle.createReadStream({ start, end, autoClose: true }))
  } finally {
    if (!keep) await handle.close()
  }
}

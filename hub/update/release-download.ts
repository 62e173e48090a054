import { createHash, type KeyObject } from 'node:crypto'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { architectureNamed } from '../../ota/architectures.ts'
import { type Catalog, CatalogError, type Installer, verifyCatalog } from '../../ota/catalog.ts'
import type { UPDATE_FAILURES } from '../../protocol/hub-messages.ts'

/** Why an update stopped before the switch; `failure` is what the hub reports to the cloud. */
export class UpdateFailed extends Error {
  readonly failure: (typeof UPDATE_FAILURES)[number]
  constructor(failure: (typeof UPDATE_FAILURES)[number], message: string) {
    super(message)
    this.failure = failure
  }
}

const CATALOG_PATH = '/agent-download-api/v1/releases'
const INSTALLER_PATH = '/agent-download-api/v1/installers/'
/** Catalogs are a few kilobytes; one much larger is not a catalog. */
const MAX_CATALOG_BYTES = 1 << 20

/** Debian's name for this machine's architecture, as the catalog lists installers. */
export function installerArchitecture(arch: string = process.arch): string {
  return architectureNamed(arch) ?? arch
}

/**
 * The cloud's release catalog (GET /agent-download-api/v1/releases, no credentials), verified with the
 * release key from the hub's own package: the signature (X-Catalog-Signature) over the exact bytes, the
 * schema, and the key id. A catalog that fails any check is refused (`catalog_rejected`).
 */
export async function fetchCatalog(cloudUrl: string, releaseKey: KeyObject): Promise<Catalog> {
  let res: Response
  try {
    res = await fetch(new URL(CATALOG_PATH, cloudUrl), { signal: AbortSignal.timeout(30_000) })
  } catch (error) {
    throw new UpdateFailed('download_failed', `the catalog could not be fetched: ${(error as Error).message}`)
  }
  if (res.status !== 200) {
    await res.body?.cancel()
    throw new UpdateFailed('download_failed', `the catalog answered ${res.status}`)
  }
  const length = Number(res.headers.get('content-length') ?? '0')
  if (length > MAX_CATALOG_BYTES) {
    await res.body?.cancel()
    throw new UpdateFailed('catalog_rejected', `the catalog is ${length} bytes long`)
  }
  const text = await boundedText(res, MAX_CATALOG_BYTES)
  try {
    return verifyCatalog({ text, signature: res.headers.get('x-catalog-signature') ?? '' }, releaseKey)
  } catch (error) {
    if (error instanceof CatalogError) throw new UpdateFailed('catalog_rejected', error.message)
    throw error
  }
}

/** The body as text, read no further than `maxBytes` (a body without Content-Length may never end). */
async function boundedText(res: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      size += chunk.length
      if (size > maxBytes)
        throw new UpdateFailed('catalog_rejected', `the catalog is longer than ${maxBytes} bytes`)
      chunks.push(chunk)
    }
  } catch (error) {
    // Leaving the loop has cancelled the body.
    if (error instanceof UpdateFailed) throw error
    throw new UpdateFailed('download_failed', `the catalog could not be read: ${(error as Error).message}`)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The tarball of `version` for this machine in the catalog: the unit a hub updates itself with. */
export function tarballOf(catalog: Catalog, version: string, arch = installerArchitecture()): Installer {
  const release = catalog.releases.find((r) => r.version === version)
  if (!release) throw new UpdateFailed('not_in_catalog', `the catalog has no release ${version}`)
  const tarball = release.installers.find(
    (i) => i.platform === 'linux' && i.architecture === arch && i.format === 'tar.gz',
  )
  if (!tarball)
    throw new UpdateFailed('not_in_catalog', `release ${version} has no tarball for linux-${arch}`)
  return tarball
}

/**
 * Downloads an installer into `dir`, hashing it on the way, and keeps it only when its size and SHA-256 are
 * the catalog's (`installer_rejected` otherwise: whatever the cloud or the network did to it, it is not the
 * file the release key vouched for). Returns the file.
 */
export async function downloadInstaller(
  cloudUrl: string,
  installer: Installer,
  dir: string,
): Promise<string> {
  await mkdir(dir, { recursive: true })
  const target = path.join(dir, installer.filename)
  const partial = `${target}.part`
  let res: Response
  try {
    res = await fetch(new URL(INSTALLER_PATH + encodeURIComponent(installer.filename), cloudUrl), {
      signal: AbortSignal.timeout(30 * 60_000),
    })
  } catch (error) {
    throw new UpdateFailed('download_failed', `${installer.filename}: ${(error as Error).message}`)
  }
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel()
    throw new UpdateFailed('download_failed', `${installer.filename} answered ${res.status}`)
  }
  const hash = createHash('sha256')
  let size = 0
  // Opened before the pipeline so that the cleanup below always finds it (a write stream opens lazily).
  const file = await open(partial, 'w', 0o600)
  try {
    await pipeline(
      Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          size += chunk.length
          // Past the catalog's size it cannot match: stop reading rather than fill the disk.
          if (size > installer.size_bytes) throw new Error('longer than the catalog says')
          hash.update(chunk)
          yield chunk
        }
      },
      file.createWriteStream(),
    )
  } catch (error) {
    await rm(partial, { force: true })
    const message = (error as Error).message
    if (message === 'longer than the catalog says')
      throw new UpdateFailed('installer_rejected', `${installer.filename} is ${message}`)
    throw new UpdateFailed('download_failed', `${installer.filename}: ${message}`)
  }
  const digest = hash.digest('hex')
  if (size !== installer.size_bytes || digest !== installer.sha256) {
    await rm(partial, { force: true })
    throw new UpdateFailed(
      'installer_rejected',
      `${installer.filename}: SHA-256 ${digest} and ${size} bytes, the catalog says ${installer.sha256} and ${installer.size_bytes} bytes`,
    )
  }
  await rename(partial, target)
  return target
}

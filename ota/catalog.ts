import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto'
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'
import { RELEASE_VERSION_PATTERN } from '../protocol/hub-messages.ts'
import { ARCHITECTURES } from './architectures.ts'

/**
 * The release catalog: which hub release is current and the installers of every release a hub may run,
 * signed with the release key (Ed25519, RFC 8032). Written by `ota publish`, `ota withdraw` and `ota resign`,
 * served byte for byte by the cloud at GET /agent-download-api/v1/releases, verified by the cloud before it
 * serves it and by hubs and installers with the public half that ships in every hub package
 * (share/release-key.pem). Its serial, expiry, floor and withdrawn releases let hubs refuse an older or
 * stale catalog (docs/hub-updates.md: Rollback, freeze and the other attacks).
 *
 * The signature covers the exact bytes of the catalog text, so anyone can check it with `openssl pkeyutl
 * -verify -rawin` (docs/releases.md); no canonical JSON is involved.
 */

/** A file name the catalog may name: no path, no dot segment, nothing a shell or a URL would mangle. */
export const INSTALLER_FILENAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/
export const RELEASE_VERSION = new RegExp(RELEASE_VERSION_PATTERN)

export const Installer = Type.Object(
  {
    filename: Type.String({ pattern: INSTALLER_FILENAME.source, description: 'The installer file name.' }),
    platform: Type.Enum(['linux'], { description: 'Operating system.' }),
    architecture: Type.Enum(ARCHITECTURES, { description: 'CPU architecture (Debian names).' }),
    format: Type.Enum(['deb', 'tar.gz'], {
      description: 'A Debian package, or a tarball of the same tree for other Linux systems.',
    }),
    size_bytes: Type.Integer({ minimum: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the file, in hex.' }),
  },
  { title: 'AgentInstaller' },
)
export type Installer = Static<typeof Installer>

export const Release = Type.Object(
  {
    version: Type.String({ pattern: RELEASE_VERSION.source }),
    released_at: Type.String({ format: 'date-time', description: 'When the release was first published.' }),
    notes: Type.String({ maxLength: 10_000 }),
    installers: Type.Array(Installer, { minItems: 1 }),
  },
  { title: 'AgentRelease' },
)
export type Release = Static<typeof Release>

// catalog_version stays 1 with the fields below: hubs released before them refuse any other format, and
// ignore fields they do not know. They are optional only so that the cloud can still serve a catalog signed
// before them; hubs refuse one without a serial and an expiry (hub/update/catalog-freshness.ts).
export const Catalog = Type.Object(
  {
    catalog_version: Type.Integer({ minimum: 1, description: 'The format of the catalog: 1.' }),
    serial: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'One higher at each signing. A hub keeps the highest it has verified and refuses a lower one; the cloud refuses to serve a lower one than it served.',
      }),
    ),
    published_at: Type.String({ format: 'date-time', description: 'When the catalog was signed.' }),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Hubs refuse the catalog from then on: it must be re-signed before (ota resign).',
      }),
    ),
    key_id: Type.String({ description: 'The release key: the first 16 hex digits of SHA-256 of its DER.' }),
    floor: Type.Optional(
      Type.String({
        pattern: RELEASE_VERSION.source,
        description: 'The oldest version a hub may run; no release below it is listed.',
      }),
    ),
    withdrawn: Type.Optional(
      Type.Array(Type.String({ pattern: RELEASE_VERSION.source }), {
        description: 'Versions withdrawn by the release key: never listed again, never to be run.',
      }),
    ),
    current: Release,
    releases: Type.Array(Release, {
      description:
        'Every release a hub may run (published, not withdrawn, not below the floor), newest first.',
    }),
  },
  { title: 'AgentReleaseCatalog' },
)
export type Catalog = Static<typeof Catalog>

/** What `ota publish` stores: the catalog text and its signature together, so that one rename swaps both. */
export interface SignedCatalog {
  /** The catalog as signed, byte for byte (UTF-8 JSON text). */
  text: string
  /** The Ed25519 signature of `text`, Base64. */
  signature: string
}

export class CatalogError extends Error {}

/** A short id of a public key: the first 16 hex digits of SHA-256 of its SubjectPublicKeyInfo DER. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' })
  return createHash('sha256').update(der).digest('hex').slice(0, 16)
}

export function readPrivateKey(pem: string | Buffer): KeyObject {
  const key = createPrivateKey(pem)
  if (key.asymmetricKeyType !== 'ed25519') throw new CatalogError('the release key must be an Ed25519 key')
  return key
}

export function readPublicKey(pem: string | Buffer): KeyObject {
  const key = createPublicKey(pem)
  if (key.asymmetricKeyType !== 'ed25519') throw new CatalogError('the release key must be an Ed25519 key')
  return key
}

export function publicKeyPem(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key
  return pub.export({ type: 'spki', format: 'pem' }).toString()
}

/** Signs the catalog: its text, pretty-printed so that a person can read what was signed. */
export function signCatalog(catalog: Catalog, privateKey: KeyObject): SignedCatalog {
  const text = `${JSON.stringify(catalog, null, 2)}\n`
  const signature = sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64')
  return { text, signature }
}

/**
 * The catalog, once its signature verifies with `publicKey` and its text holds a well-formed catalog whose
 * installer names are unique. Throws CatalogError otherwise.
 */
export function verifyCatalog(signed: SignedCatalog, publicKey: KeyObject): Catalog {
  const signature = Buffer.from(signed.signature, 'base64')
  if (signature.length !== 64 || !verify(null, Buffer.from(signed.text, 'utf8'), publicKey, signature))
    throw new CatalogError('the catalog signature does not verify with the release key')
  let parsed: unknown
  try {
    parsed = JSON.parse(signed.text)
  } catch {
    throw new CatalogError('the catalog is not JSON')
  }
  if (!Value.Check(Catalog, parsed) || parsed.catalog_version !== 1)
    throw new CatalogError('the catalog does not have the catalog schema')
  const names = parsed.releases.flatMap((r) => r.installers.map((i) => i.filename))
  if (new Set(names).size !== names.length) throw new CatalogError('the catalog names an installer twice')
  if (!parsed.releases.some((r) => r.version === parsed.current.version))
    throw new CatalogError('the current release is not among the releases')
  const { floor, withdrawn = [] } = parsed
  for (const { version } of parsed.releases) {
    if (floor !== undefined && compareVersions(version, floor) < 0)
      throw new CatalogError(`the catalog lists release ${version} below its floor ${floor}`)
    if (withdrawn.includes(version))
      throw new CatalogError(`the catalog lists release ${version}, which it withdraws`)
  }
  if (parsed.key_id !== keyIdOf(publicKey)) throw new CatalogError('the catalog names another release key')
  return parsed
}

/** Parses the stored envelope (`{"text", "signature"}`); throws CatalogError when it is not one. */
export function parseSignedCatalog(stored: string): SignedCatalog {
  let value: unknown
  try {
    value = JSON.parse(stored)
  } catch {
    throw new CatalogError('the stored catalog is not JSON')
  }
  const { text, signature } = (value ?? {}) as Record<string, unknown>
  if (typeof text !== 'string' || typeof signature !== 'string')
    throw new CatalogError('the stored catalog has no text and signature')
  return { text, signature }
}

/** The layout of DATA_DIR/releases, written by `ota publish` and read by the cloud. */
export const RELEASES_DIR = 'releases'
/** The signed catalog (the envelope of SignedCatalog). */
export const CATALOG_FILE = 'catalog.json'
/** The public half of the release key the catalog was first published with. */
export const RELEASE_KEY_FILE = 'release-key.pem'
/** An installer's file: DATA_DIR/releases/<version>/<filename>. */
export const installerPath = (releasesDir: string, version: string, filename: string) =>
  `${releasesDir}/${version}/${filename}`

/** Orders versions X.Y.Z oldest first: negative when `a` is older than `b`. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0)
  return 0
}

/** Orders versions X.Y.Z newest first. */
export const compareVersionsDescending = (a: string, b: string): number => compareVersions(b, a)

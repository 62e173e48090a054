import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { type Architecture, parseArchitectures } from './architectures.ts'
import { buildRelease } from './build.ts'
import {
  type Catalog,
  CatalogError,
  publicKeyPem,
  RELEASE_VERSION,
  readPrivateKey,
  readPublicKey,
} from './catalog.ts'
import { DEFAULT_EXPIRY_DAYS, MAX_EXPIRY_DAYS } from './catalog-store.ts'
import { buildImage, IMAGE_ARCHITECTURES, type ImageArchitecture } from './image.ts'
import { CLOUD_URL } from './image-root.ts'
import { publishRelease } from './publish.ts'
import { writeReleaseKey } from './release-key.ts'
import { resignCatalog, withdrawRelease } from './resign.ts'

/**
 * The release builder's CLI (docs/releases.md): `build --version X.Y.Z --out DIR`,
 * `image --version X.Y.Z --cloud URL --out DIR` (docs/appliance.md), `publish --from DIR`, `withdraw VERSION`,
 * `resign` and `keygen --out DIR`. Each prints one JSON object on stdout; errors are one line on stderr, exit
 * code 2 for a usage error and 1 otherwise. `image`, which takes minutes, also says each step on stderr.
 */
const HELP = `usage: ota build --version X.Y.Z --out DIR [--arch ARCH[,ARCH…]]
       ota image --version X.Y.Z --cloud URL --out DIR [--arch arm64] [--from DIR]
       ota publish --from DIR [--notes TEXT | --notes-file FILE] [--expires-in DAYS] [--without-boot-test REASON]
       ota withdraw VERSION | --below X.Y.Z [--expires-in DAYS]
       ota resign [--expires-in DAYS] [--serial N]
       ota keygen --out DIR

Builds and publishes releases of the hub (docs/releases.md).

commands:
  build                            build the hub's installers into DIR: print-hub_X.Y.Z_<arch>.deb and
                                   print-hub_X.Y.Z_linux-<arch>.tar.gz for each architecture, and release.json
                                   (which keeps the other architectures built into DIR for the same version)
                                   → {version, installers: [{filename, architecture, sha256, size_bytes}]}
      --version X.Y.Z              the release's version
      --out DIR                    where the installers go
      --arch ARCH                  amd64, arm64 or armhf (Raspberry Pi OS 32-bit; carries Node.js 20.11.0);
                                   repeat it or separate with commas for several (default: this machine's);
                                   the native addons are cross-compiled (scripts/setup.sh installs the
                                   toolchains)
      --public-key FILE            the release key's public half, shipped in the package (default: derived
                                   from OTA_SIGNING_KEY, or OTA_RELEASE_PUBLIC_KEY)
  image                            a Raspberry Pi card image (Pi 3 and 4; docs/appliance.md): Debian 12 with the
                                   hub's package installed, DIR/print-hub-X.Y.Z-raspi-<arch>.img.xz and its
                                   SHA-256 in …img.xz.sha256; needs root, debootstrap, qemu-user-static,
                                   dosfstools, mtools, fdisk, e2fsprogs and xz-utils
                                   → {version, architecture, filename, sha256, size_bytes, raw_size_bytes,
                                   build_seconds}
      --version X.Y.Z              the hub's version in the image
      --cloud URL                  the cloud it joins (PRINT_HUB_CLOUD; print-hub.txt on the card overrides it)
      --out DIR                    where the image goes
      --arch arm64                 the image's architecture (arm64, the only one so far)
      --from DIR                   take the hub's package from this ota build output directory instead of
                                   building it (then no release key is needed)
      --public-key FILE            as for build
  publish                          add the release in DIR to the catalog of the cloud in DATA_DIR, as current,
                                   signed with the release key → {version, key_id, serial, expires_at, releases}
      --from DIR                   a directory written by ota build
      --signing-key FILE           the release key (Ed25519, PKCS#8 PEM; default OTA_SIGNING_KEY); it must
                                   not lie inside DATA_DIR and is never copied
      --notes TEXT, --notes-file FILE   release notes
      --expires-in DAYS            hubs refuse the catalog DAYS days after signing (default ${DEFAULT_EXPIRY_DAYS},
                                   at most ${MAX_EXPIRY_DAYS}): re-sign it before then (ota resign)
      --without-boot-test REASON   publish an arm64 package although DIR has no appliance-boot-test.json
                                   for it (the boot test of the card image made from it, which passing
                                   writes: docs/appliance-boot-test.md); refused otherwise
  withdraw VERSION                 take a release out of the catalog for good: hubs are never told to run it
                                   again (pins to it are ignored) and it cannot be published again; when it
                                   was current, the newest release left becomes current
                                   → {current, serial, expires_at, floor, withdrawn, releases}
      --below X.Y.Z                instead: raise the floor, withdrawing every release older than X.Y.Z
      --signing-key FILE, --expires-in DAYS   as for publish
  resign                           sign the catalog again as it is, with a higher serial and a new expiry
                                   → {current, serial, expires_at, floor, withdrawn, releases}
      --serial N                   the new serial (above one the cloud served: it names it when it refuses)
      --signing-key FILE, --expires-in DAYS   as for publish
  keygen                           a new release key: DIR/release-key.pem (private, mode 0600) and
                                   DIR/release-key.pub.pem → {key_id, private_key_file, public_key_file}
      --out DIR
  help, --help                     this help

environment:
  DATA_DIR                         the cloud's data directory (publish; default ./data)
  OTA_SIGNING_KEY                  the release key's file (publish, and build's public half)
  OTA_RELEASE_PUBLIC_KEY           the release key's public half (build)
  OTA_CACHE_DIR                    where the Node.js runtime packages, and the image's Debian base and
                                   .debs, are kept (~/.cache/print-hub-ota)
`

class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`)
  return value
}

function readKeyFile(file: string, what: string): string {
  if (!existsSync(file)) throw new UsageError(`${what}: no such file ${file}`)
  return readFileSync(file, 'utf8')
}

/** The public half to ship: --public-key, OTA_RELEASE_PUBLIC_KEY, or derived from the signing key. */
function publicKeyForBuild(flag: string | undefined, signingKey: string | undefined): string {
  const publicFile = flag ?? process.env.OTA_RELEASE_PUBLIC_KEY
  if (publicFile) return publicKeyPem(readPublicKey(readKeyFile(publicFile, '--public-key')))
  const privateFile = signingKey ?? process.env.OTA_SIGNING_KEY
  if (privateFile) return publicKeyPem(readPrivateKey(readKeyFile(privateFile, 'OTA_SIGNING_KEY')))
  throw new UsageError(
    'no release key: pass --public-key FILE or set OTA_SIGNING_KEY (a new one: ota keygen --out DIR)',
  )
}

/** Whether `file` lies inside `dir` (both resolved through symlinks where they exist). */
function isInside(file: string, dir: string): boolean {
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : path.resolve(p))
  const relative = path.relative(real(dir), real(file))
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

const SIGNING_OPTIONS = {
  'signing-key': { type: 'string' },
  'expires-in': { type: 'string' },
} as const

function positiveInteger(text: string, flag: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text)) throw new UsageError(`${flag} must be a positive integer`)
  return Number(text)
}

/** The release key (never one inside DATA_DIR), DATA_DIR and the expiry, for a command that signs. */
function signingOptions(values: { 'signing-key'?: string; 'expires-in'?: string }) {
  const keyFile = values['signing-key'] ?? process.env.OTA_SIGNING_KEY
  if (!keyFile) throw new UsageError('no release key: pass --signing-key FILE or set OTA_SIGNING_KEY')
  const dataDir = path.resolve(process.env.DATA_DIR || './data')
  if (isInside(keyFile, dataDir))
    throw new UsageError(`the release key must not lie inside DATA_DIR (${dataDir}): keep it offline`)
  const days = values['expires-in']
  return {
    dataDir,
    privateKeyPem: readKeyFile(keyFile, '--signing-key'),
    ...(days !== undefined && { expiresInDays: positiveInteger(days, '--expires-in') }),
  }
}

const signedSummary = (catalog: Catalog) => ({
  current: catalog.current.version,
  serial: catalog.serial,
  expires_at: catalog.expires_at,
  floor: catalog.floor,
  withdrawn: catalog.withdrawn,
  releases: catalog.releases.map((r) => r.version),
})

async function main(argv: string[]): Promise<unknown> {
  const [command, ...args] = argv
  if (command === undefined) throw new UsageError('no command given')
  if (command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP)
    return undefined
  }
  if (command === 'build') {
    const { values } = parseArgs({
      args,
      options: {
        version: { type: 'string' },
        out: { type: 'string' },
        'public-key': { type: 'string' },
        'signing-key': { type: 'string' },
        arch: { type: 'string', multiple: true },
      },
    })
    const version = required(values.version, '--version')
    let architectures: Architecture[]
    try {
      architectures = parseArchitectures(values.arch ?? [])
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
    const outDir = path.resolve(required(values.out, '--out'))
    const manifest = await buildRelease({
      root: path.resolve(import.meta.dirname, '..'),
      version,
      outDir,
      publicKeyPem: publicKeyForBuild(values['public-key'], values['signing-key']),
      architectures,
    })
    return {
      version: manifest.version,
      installers: manifest.installers.map(({ filename, architecture, sha256, size_bytes }) => ({
        filename,
        architecture,
        sha256,
        size_bytes,
      })),
    }
  }
  if (command === 'image') {
    const { values } = parseArgs({
      args,
      options: {
        version: { type: 'string' },
        out: { type: 'string' },
        cloud: { type: 'string' },
        arch: { type: 'string' },
        from: { type: 'string' },
        'public-key': { type: 'string' },
        'signing-key': { type: 'string' },
      },
    })
    const version = required(values.version, '--version')
    if (!RELEASE_VERSION.test(version))
      throw new UsageError(`the version must be X.Y.Z (got ${JSON.stringify(version)})`)
    const cloudUrl = required(values.cloud, '--cloud')
    if (!CLOUD_URL.test(cloudUrl))
      throw new UsageError(
        `--cloud must be an http(s) URL such as https://print.example.com (got ${cloudUrl})`,
      )
    const arch = values.arch ?? 'arm64'
    if (!(IMAGE_ARCHITECTURES as readonly string[]).includes(arch))
      throw new UsageError(`--arch: images are made for ${IMAGE_ARCHITECTURES.join(', ')} (got ${arch})`)
    const outDir = path.resolve(required(values.out, '--out'))
    if (process.getuid?.() !== 0) throw new UsageError('ota image needs root (debootstrap, chroot)')
    const fromDir = values.from === undefined ? undefined : path.resolve(values.from)
    const image = await buildImage({
      root: path.resolve(import.meta.dirname, '..'),
      version,
      arch: arch as ImageArchitecture,
      outDir,
      cloudUrl,
      ...(fromDir
        ? { fromDir }
        : { publicKeyPem: publicKeyForBuild(values['public-key'], values['signing-key']) }),
      log: (line) => process.stderr.write(`ota image: ${line}\n`),
    })
    return {
      version,
      architecture: arch,
      filename: image.filename,
      sha256: image.sha256,
      size_bytes: image.size_bytes,
      raw_size_bytes: image.raw_size_bytes,
      build_seconds: image.build_seconds,
    }
  }
  if (command === 'publish') {
    const { values } = parseArgs({
      args,
      options: {
        ...SIGNING_OPTIONS,
        from: { type: 'string' },
        notes: { type: 'string' },
        'notes-file': { type: 'string' },
        'without-boot-test': { type: 'string' },
      },
    })
    const fromDir = path.resolve(required(values.from, '--from'))
    const withoutBootTest = values['without-boot-test']
    if (withoutBootTest !== undefined && withoutBootTest.trim() === '')
      throw new UsageError('--without-boot-test needs the reason')
    const signing = signingOptions(values)
    if (values.notes !== undefined && values['notes-file'] !== undefined)
      throw new UsageError('pass --notes or --notes-file, not both')
    const notes =
      values['notes-file'] !== undefined ? readFileSync(values['notes-file'], 'utf8') : values.notes
    const catalog = await publishRelease({
      ...signing,
      fromDir,
      ...(notes !== undefined && { notes }),
      ...(withoutBootTest !== undefined && { withoutBootTest }),
    })
    return {
      version: catalog.current.version,
      key_id: catalog.key_id,
      serial: catalog.serial,
      expires_at: catalog.expires_at,
      installers: catalog.current.installers.map((i) => i.filename),
      releases: catalog.releases.map((r) => r.version),
    }
  }
  if (command === 'withdraw') {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { ...SIGNING_OPTIONS, below: { type: 'string' } },
    })
    const [version, ...more] = positionals
    if ((version === undefined) === (values.below === undefined) || more.length > 0)
      throw new UsageError('give a VERSION to withdraw, or --below X.Y.Z')
    const named = version ?? values.below ?? ''
    if (!RELEASE_VERSION.test(named))
      throw new UsageError(`the version must be X.Y.Z (got ${JSON.stringify(named)})`)
    const signing = signingOptions(values)
    return signedSummary(
      await withdrawRelease(version !== undefined ? { ...signing, version } : { ...signing, below: named }),
    )
  }
  if (command === 'resign') {
    const { values } = parseArgs({ args, options: { ...SIGNING_OPTIONS, serial: { type: 'string' } } })
    const serial = values.serial === undefined ? undefined : positiveInteger(values.serial, '--serial')
    return signedSummary(await resignCatalog({ ...signingOptions(values), ...(serial && { serial }) }))
  }
  if (command === 'keygen') {
    const { values } = parseArgs({ args, options: { out: { type: 'string' } } })
    return writeReleaseKey(path.resolve(required(values.out, '--out')))
  }
  throw new UsageError(`unknown command: ${command}`)
}

main(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result)}\n`)
  },
  (error: unknown) => {
    const err = error as NodeJS.ErrnoException
    if (error instanceof UsageError || err.code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(
        `ota: ${err.message}\nusage: ota build|image|publish|withdraw|resign|keygen … (ota --help)\n`,
      )
      process.exit(2)
    }
    const prefix = error instanceof CatalogError ? 'ota: refused: ' : 'ota: '
    process.stderr.write(`${prefix}${err.message ?? String(error)}\n`)
    process.exit(1)
  },
)

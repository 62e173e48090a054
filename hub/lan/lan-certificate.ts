// tsyringe, which @peculiar/x509 loads, throws at import without a Reflect metadata polyfill: load it first.
import 'reflect-metadata'
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  webcrypto,
  X509Certificate,
} from 'node:crypto'
import { chmod, open, readFile, rename, rm, stat } from 'node:fs/promises'
import { isIP } from 'node:net'
import path from 'node:path'
import * as x509 from '@peculiar/x509'

export const LAN_TLS_KEY_FILE = 'lan-tls.key'
export const LAN_TLS_CERT_FILE = 'lan-tls.crt'

const DAY_MS = 86_400_000
const DEFAULT_VALID_DAYS = 825
/** A certificate with this little left is made again at start-up, well before a till sees it expire. */
const RENEW_WITHIN_MS = 30 * DAY_MS
/** Room for a till whose clock is a little behind the hub's. */
const BACKDATE_MS = 3_600_000
/** RFC 5280 Appendix A: ub-common-name. */
const MAX_COMMON_NAME_LENGTH = 64
/** RFC 1034 §3.5 preferred name syntax, which a dNSName must follow (RFC 5280 §4.2.1.6). */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/
const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const

x509.cryptoProvider.set(webcrypto)

export interface LanCertificateOptions {
  /** The hub's state directory. */
  dir: string
  hubId: string
  /** DNS names the certificate names, e.g. `<hostname>.local`. */
  hostnames: readonly string[]
  /** IPv4 and IPv6 addresses the certificate names. */
  addresses: readonly string[]
  now?: Date
  /** How long a new certificate is valid; 31 to 825 days, 825 by default. */
  validDays?: number
}

/** The hub's TLS key and self-signed certificate for its LAN API, which tills trust by pinning. */
export interface LanCertificate {
  /** PKCS#8 PEM; it never leaves the hub. */
  key: string
  /** PEM. */
  cert: string
  /** Lowercase hex SHA-256 of the certificate's DER: what the cloud publishes and DNS-SD TXT carries. */
  sha256: string
  /** Base64 SHA-256 of the SubjectPublicKeyInfo DER (the RFC 7469 pin form); it survives renewal. */
  spkiSha256: string
  notAfter: Date
}

/**
 * `dir/lan-tls.key` and `dir/lan-tls.crt`, made when missing. The certificate is kept while it names the
 * hub, covers `hostnames` and `addresses` and has more than 30 days left; otherwise a new one is made with the
 * same key. An unreadable key is replaced by a new one (and so is the certificate).
 */
export async function loadOrCreateLanCertificate(options: LanCertificateOptions): Promise<LanCertificate> {
  const now = options.now ?? new Date()
  const validDays = options.validDays ?? DEFAULT_VALID_DAYS
  if (!Number.isInteger(validDays) || validDays <= RENEW_WITHIN_MS / DAY_MS || validDays > DEFAULT_VALID_DAYS)
    throw new RangeError(`validDays must be an integer from 31 to 825 (got ${validDays})`)
  const commonName = `print-hub ${options.hubId}`
  if (!options.hubId || commonName.length > MAX_COMMON_NAME_LENGTH)
    throw new RangeError(`hubId must make a common name of 1 to ${MAX_COMMON_NAME_LENGTH} characters`)
  const names = subjectAltNames(options.hostnames, options.addresses)

  const keyFile = path.join(options.dir, LAN_TLS_KEY_FILE)
  const certFile = path.join(options.dir, LAN_TLS_CERT_FILE)
  let privateKey = await readPrivateKey(keyFile)
  if (privateKey === undefined) {
    privateKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey
    await writeFileAtomically(keyFile, pkcs8Pem(privateKey), 0o600)
  }
  const publicKey = createPublicKey(privateKey)

  let cert = await readText(certFile)
  if (cert === undefined || !stillFits(cert, privateKey, publicKey, commonName, names, now)) {
    cert = await selfSignedCertificate(privateKey, publicKey, commonName, names, now, validDays)
    await writeFileAtomically(certFile, cert, 0o644)
  }
  const parsed = new X509Certificate(cert)
  return {
    key: pkcs8Pem(privateKey),
    cert,
    sha256: createHash('sha256').update(parsed.raw).digest('hex'),
    spkiSha256: createHash('sha256')
      .update(publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64'),
    notAfter: new Date(parsed.validTo),
  }
}

/** Options for Node's `https.createServer` and Fastify's `https`. */
export function lanTlsOptions(certificate: LanCertificate): {
  key: string
  cert: string
  minVersion: 'TLSv1.2'
} {
  return { key: certificate.key, cert: certificate.cert, minVersion: 'TLSv1.2' }
}

interface SubjectAltNames {
  dns: string[]
  ips: string[]
}

function subjectAltNames(hostnames: readonly string[], addresses: readonly string[]): SubjectAltNames {
  const dns = [...new Set(hostnames.map((name) => name.toLowerCase().replace(/\.$/, '')))]
  const bad = dns.find((name) => !DNS_NAME.test(name))
  if (bad !== undefined) throw new TypeError(`not a DNS name for a certificate: ${JSON.stringify(bad)}`)
  const ips = [...new Set(addresses.map(canonicalAddress))]
  if (dns.length + ips.length === 0) throw new TypeError('a LAN certificate needs a host name or an address')
  return { dns, ips }
}

/** RFC 5952 text for IPv6 (which the library's own parser needs: it misreads `::ffff:1.2.3.4`). */
function canonicalAddress(address: string): string {
  if (isIP(address) === 4) return address
  if (isIP(address) === 6 && !address.includes('%'))
    return new URL(`http://[${address}]`).hostname.slice(1, -1)
  throw new TypeError(`not an IP address for a certificate: ${JSON.stringify(address)}`)
}

async function readPrivateKey(file: string): Promise<KeyObject | undefined> {
  const pem = await readText(file)
  if (pem === undefined) return undefined
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch {
    return undefined
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    return undefined
  if (((await stat(file)).mode & 0o777) !== 0o600) await chmod(file, 0o600)
  return key
}

function stillFits(
  pem: string,
  privateKey: KeyObject,
  publicKey: KeyObject,
  commonName: string,
  wanted: SubjectAltNames,
  now: Date,
): boolean {
  const read = readCertificate(pem)
  if (read === undefined) return false
  const { cert, commonNames, names } = read
  if (!cert.checkPrivateKey(privateKey) || !cert.verify(publicKey)) return false
  if (Date.parse(cert.validTo) - now.getTime() <= RENEW_WITHIN_MS) return false
  if (commonNames.length !== 1 || commonNames[0] !== commonName) return false
  return (
    wanted.dns.every((name) => names.dns.includes(name)) && wanted.ips.every((ip) => names.ips.includes(ip))
  )
}

/** A PEM certificate's subject CNs and subjectAltNames, or nothing when it does not parse. */
function readCertificate(
  pem: string,
): { cert: X509Certificate; commonNames: string[]; names: SubjectAltNames } | undefined {
  try {
    const cert = new X509Certificate(pem)
    const parsed = new x509.X509Certificate(pem)
    const items = parsed.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? []
    const names = {
      dns: items.filter((n) => n.type === 'dns').map((n) => n.value.toLowerCase()),
      ips: items.filter((n) => n.type === 'ip').map((n) => canonicalAddress(n.value)),
    }
    return { cert, commonNames: parsed.subjectName.getField('CN'), names }
  } catch {
    return undefined
  }
}

/** An X.509 v3 server certificate signed by its own key (RFC 5280 §4.1, §4.2.1), as PEM. */
async function selfSignedCertificate(
  privateKey: KeyObject,
  publicKey: KeyObject,
  commonName: string,
  names: SubjectAltNames,
  now: Date,
  validDays: number,
): Promise<string> {
  const keys = {
    privateKey: await webcrypto.subtle.importKey(
      'pkcs8',
      privateKey.export({ type: 'pkcs8', format: 'der' }),
      ECDSA_P256,
      false,
      ['sign'],
    ),
    publicKey: await webcrypto.subtle.importKey(
      'spki',
      publicKey.export({ type: 'spki', format: 'der' }),
      ECDSA_P256,
      true,
      ['verify'],
    ),
  }
  // Certificate times have whole seconds (RFC 5280 §4.1.2.5).
  const start = Math.floor(now.getTime() / 1000) * 1000
  const serial = randomBytes(16)
  serial[0] = 0x40 | (serial[0]! & 0x3f) // positive and 16 octets in DER (RFC 5280 §4.1.2.2)
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: [{ '2.5.4.3': [commonName] }],
    notBefore: new Date(start - BACKDATE_MS),
    notAfter: new Date(start + validDays * DAY_MS),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...names.dns.map((value) => ({ type: 'dns' as const, value })),
        ...names.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return certificate.toString('pem')
}

function pkcs8Pem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }) as string
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Through a temporary file, flushed and renamed, then the directory flushed: a power cut leaves old or new. */
async function writeFileAtomically(file: string, text: string, mode: number): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    const handle = await open(temporary, 'wx', mode)
    try {
      await handle.chmod(mode) // whatever the umask
      await handle.writeFile(text)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
  const directory = await open(path.dirname(file), 'r')
  try {
    await directory.sync()
  } finally {
    await directory.close()
  }
}

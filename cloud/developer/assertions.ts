import {
  decodeJwt,
  decodeProtectedHeader,
  errors,
  importJWK,
  type JWTPayload,
  jwtVerify,
  type ProtectedHeaderParameters,
} from 'jose'
import type { Application } from '../storage/applications.ts'
import type { Storage } from '../storage/storage.ts'
import { isUuid } from '../uuid.ts'

/**
 * Application assertions (spec: Authentication, model 2), shaped as RFC 7523 §3 JWT bearer assertions:
 * RS256-signed, `iss` the app id, `aud` the cloud's PUBLIC_URL, `iat`, `exp` at most ten minutes after `iat`,
 * and a `jti` the cloud accepts once. Checked with jose; the used `jti`s are kept in storage until the
 * assertion would have expired anyway, so several cloud nodes on one database agree.
 */
export const ASSERTION_MAX_LIFETIME_SECONDS = 600
export const ASSERTION_CLOCK_SKEW_SECONDS = 60
const MAX_JTI_LENGTH = 256
/** A key id as stored: printable ASCII (a JWK's own kid, or a base64url thumbprint). */
const KID = /^[\x20-\x7e]{1,200}$/
/** jti values the service stores: no control characters. */
const JTI = /^\P{Cc}+$/u

/** Why an assertion was refused, as told to the caller (error_description of the 401). */
export class AssertionRefused extends Error {
  constructor(
    message: string,
    readonly replayed = false,
  ) {
    super(message)
    this.name = 'AssertionRefused'
  }
}

function header(assertion: string): ProtectedHeaderParameters {
  if (assertion.split('.').length !== 3) throw new AssertionRefused('not a signed JWT (JWS compact form)')
  try {
    return decodeProtectedHeader(assertion)
  } catch {
    throw new AssertionRefused('not a signed JWT (JWS compact form)')
  }
}

function claims(assertion: string): JWTPayload {
  try {
    return decodeJwt(assertion)
  } catch {
    throw new AssertionRefused('its claims are not a JSON object')
  }
}

/** jose's refusals, in the words of the claims they concern. */
function refusal(error: unknown): AssertionRefused {
  if (error instanceof errors.JWTExpired) return new AssertionRefused('expired (exp is past)')
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return new AssertionRefused("aud is not this service's PUBLIC_URL")
    if (error.claim === 'iat') return new AssertionRefused('iat is in the future')
    if (error.claim === 'nbf') return new AssertionRefused('not valid yet (nbf)')
    return new AssertionRefused(`the ${error.claim} claim is missing or invalid`)
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return new AssertionRefused('it must be signed with RS256')
  return new AssertionRefused('the signature or its form is invalid')
}

export interface AssertionCheck {
  storage: Storage
  /** The cloud's PUBLIC_URL: the only audience accepted. */
  audience: string
  /** Epoch milliseconds. */
  now?: number
}

/** The application that signed `assertion`, once; throws AssertionRefused otherwise. */
export async function verifyAssertion(assertion: string, check: AssertionCheck): Promise<Application> {
  const now = check.now ?? Date.now()
  const { alg, kid } = header(assertion)
  // Named first: a token with alg none or HS256 (an HMAC keyed with the public key) never reaches a key.
  if (alg !== 'RS256') throw new AssertionRefused('it must be signed with RS256')
  const unverified = claims(assertion)
  if (typeof unverified.iss !== 'string' || unverified.iss === '') {
    throw new AssertionRefused('iss (the app id) is missing')
  }
  // App ids are UUIDs; anything else names no application (and is never sent to the database).
  const application = isUuid(unverified.iss)
    ? await check.storage.applications.findById(unverified.iss)
    : undefined
  if (!application) throw new AssertionRefused('iss names no application')
  if (kid !== undefined && (typeof kid !== 'string' || !KID.test(kid))) {
    throw new AssertionRefused('kid names no key of this application')
  }
  const keys = await check.storage.applications.keys(application.app_id, kid)
  if (keys.length === 0) throw new AssertionRefused('kid names no key of this application')
  let verified: JWTPayload | undefined
  let failure: unknown
  for (const key of keys) {
    try {
      const { payload } = await jwtVerify(assertion, await importJWK(key.jwk, 'RS256'), {
        algorithms: ['RS256'],
        issuer: application.app_id,
        audience: check.audience,
        requiredClaims: ['iat', 'exp', 'jti'],
        clockTolerance: ASSERTION_CLOCK_SKEW_SECONDS,
        currentDate: new Date(now),
      })
      verified = payload
      break
    } catch (error) {
      failure = error
      // Another key of the application may have signed it (rotation); any other refusal is final.
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) break
    }
  }
  if (!verified) throw refusal(failure)
  const { iat = 0, exp = 0, jti } = verified
  const nowSeconds = now / 1000
  if (iat > nowSeconds + ASSERTION_CLOCK_SKEW_SECONDS) throw new AssertionRefused('iat is in the future')
  if (exp - iat > ASSERTION_MAX_LIFETIME_SECONDS) {
    throw new AssertionRefused(`exp is more than ${ASSERTION_MAX_LIFETIME_SECONDS} s after iat`)
  }
  if (typeof jti !== 'string' || !JTI.test(jti) || jti.length > MAX_JTI_LENGTH) {
    throw new AssertionRefused(`jti must be 1 to ${MAX_JTI_LENGTH} characters, none a control character`)
  }
  // Kept until it would have been refused as expired anyway (exp plus the clock skew allowed).
  const keepUntil = (exp + ASSERTION_CLOCK_SKEW_SECONDS) * 1000
  if (!(await check.storage.applications.useAssertion(application.app_id, jti, keepUntil, now))) {
    throw new AssertionRefused('already used (its jti was seen before)', true)
  }
  return application
}

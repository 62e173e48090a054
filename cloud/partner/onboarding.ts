import { ApiError } from '../../print-api/api-error.ts'
import type { AgentEnrollment, IssuedAgentEnrollment } from '../../protocol/partner.ts'
import { createEnrollment } from '../onboarding/new-enrollment.ts'
import type { Enrollment } from '../storage/enrollments.ts'
import type { Storage } from '../storage/storage.ts'

/** Hosts a development return_uri may name over plain http (RFC 8252 §7.3 loopback redirects). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Whether a URL may be an onboarding link's return_uri (issue 10 point 7): absolute https, or http on the
 * loopback for development; no credentials and no fragment (RFC 6749 §3.1.2: a redirection endpoint has none).
 */
export function isAllowedReturnUri(returnUri: string): boolean {
  let url: URL | undefined
  try {
    url = new URL(returnUri)
  } catch {
    return false
  }
  return (
    (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    !returnUri.includes('#')
  )
}

/** agent_onboarding.return_uri: a 422 `return_uri_not_allowed` unless `isAllowedReturnUri`. */
export function checkReturnUri(returnUri: string): void {
  if (!isAllowedReturnUri(returnUri)) {
    throw new ApiError(
      'return_uri_not_allowed',
      'agent_onboarding.return_uri must be an https URL (http only for localhost or 127.0.0.1), without credentials or fragment.',
      { field: 'agent_onboarding.return_uri' },
    )
  }
}

/** Where an enrollment is issued: the managed account it belongs to. */
export interface EnrollmentOwner {
  account_id: string
  relationship_id: string
}

/** What the partner asked for: the hub's name and where the onboarding page returns. */
export interface EnrollmentAsked {
  name: string
  agent_onboarding: { return_uri: string; state: string }
}

export interface OnboardingSettings {
  /** PUBLIC_URL: the onboarding page is served at `${publicUrl}/onboarding/<token>`. */
  publicUrl: string
  /** ENROLLMENT_TTL_HOURS: the enrollment and its link expire together. */
  enrollmentTtlHours: number
}

/** The partner view of an enrollment (never its secrets). */
export function agentEnrollmentView(enrollment: Enrollment, relationshipId: string): AgentEnrollment {
  return {
    enrollment_id: enrollment.enrollment_id,
    relationship_id: relationshipId,
    name: enrollment.name,
    state: enrollment.state,
    created_at: enrollment.created_at,
    expires_at: enrollment.expires_at,
    claimed_at: enrollment.claimed_at,
    revoked_at: enrollment.revoked_at,
    agent_id: enrollment.agent_id,
  }
}

/**
 * A one-time enrollment with its hosted onboarding link: two single-use random secrets (the enrollment token
 * a hub can be started with, and the token of the onboarding URL), stored only as SHA-256 digests and shown
 * in this answer only. Both expire with the enrollment.
 */
export async function issueEnrollment(
  storage: Storage,
  owner: EnrollmentOwner,
  asked: EnrollmentAsked,
  settings: OnboardingSettings,
): Promise<IssuedAgentEnrollment> {
  const { return_uri: returnUri, state } = asked.agent_onboarding
  const issued = await createEnrollment(
    storage.enrollments,
    { accountId: owner.account_id, name: asked.name, ttlHours: settings.enrollmentTtlHours },
    { publicUrl: settings.publicUrl, returnUri, state },
  )
  return {
    ...agentEnrollmentView(issued.enrollment, owner.relationship_id),
    enrollment_token: issued.token,
    onboarding_url: issued.onboardingUrl,
  }
}

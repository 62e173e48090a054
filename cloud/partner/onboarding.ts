import type { AgentEnrollment, IssuedAgentEnrollment } from '../../protocol/partner.ts'
import { generateSecret, hashSecret } from '../auth/secrets.ts'
import { ApiError } from '../errors.ts'
import type { Enrollment } from '../storage/enrollments.ts'
import type { Storage } from '../storage/storage.ts'

/** Hosts a development return_uri may name over plain http (RFC 8252 §7.3 loopback redirects). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * agent_onboarding.return_uri (issue 10 point 7): absolute https, or http on the loopback for development;
 * no credentials and no fragment (RFC 6749 §3.1.2: a redirection endpoint has none).
 */
export function checkReturnUri(returnUri: string): void {
  let url: URL | undefined
  try {
    url = new URL(returnUri)
  } catch {
    url = undefined
  }
  const allowed =
    url !== undefined &&
    (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    !returnUri.includes('#')
  if (!allowed) {
    throw new ApiError(
      'return_uri_not_allowed',
      'agent_onboarding.return_uri must be an https URL (http only for localhost or 127.0.0.1), without credentials or fragment.',
      { field: 'agent_onboarding.return_uri' },
    )
  }
}

export interface EnrollmentIssue {
  accountId: string
  relationshipId: string
  name: string
  returnUri: string
  state: string
  /** PUBLIC_URL: the onboarding page is served at `${publicUrl}/onboarding/<token>`. */
  publicUrl: string
  ttlHours: number
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
  issue: EnrollmentIssue,
): Promise<IssuedAgentEnrollment> {
  const token = generateSecret('enr')
  const onboardingToken = generateSecret('onb')
  const enrollment = await storage.enrollments.create(
    issue.accountId,
    issue.name,
    hashSecret(token),
    new Date(Date.now() + issue.ttlHours * 3600_000),
    { hash: hashSecret(onboardingToken), returnUri: issue.returnUri, state: issue.state },
  )
  return {
    ...agentEnrollmentView(enrollment, issue.relationshipId),
    enrollment_token: token,
    onboarding_url: `${issue.publicUrl}/onboarding/${onboardingToken}`,
  }
}

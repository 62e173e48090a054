import { Value } from 'typebox/value'
import { generateSecret, hashSecret } from '../../print-api/secrets.ts'
import { CreateAgentEnrollmentRequest } from '../../protocol/partner.ts'
import type { Enrollment, EnrollmentRepository } from '../storage/enrollments.ts'

/** Whether a hub's name is one the partner API takes for an enrollment: 1 to 200 characters, no NUL. */
export const isHubName = (name: string): boolean =>
  Value.Check(CreateAgentEnrollmentRequest.properties.name, name)

/** What an enrollment is issued for: the account, the hub's name and how long the token lasts. */
export interface EnrollmentAskedFor {
  accountId: string
  name: string
  /** ENROLLMENT_TTL_HOURS: the token (and its onboarding link, if any) expire together. */
  ttlHours: number
}

/** An onboarding link to issue with the enrollment: where its page lives and where it sends the installer back. */
export interface OnboardingLinkAskedFor {
  /** PUBLIC_URL: the page is served at `${publicUrl}/onboarding/<token>`. */
  publicUrl: string
  returnUri: string
  state: string
}

/** A new enrollment with its secrets, which are shown once and stored only as SHA-256 digests. */
export interface NewEnrollment<Link extends string | null = string | null> {
  enrollment: Enrollment
  /** The single-use enrollment token (`hub run --enroll TOKEN`). */
  token: string
  /** The single-use onboarding URL, when one was asked for. */
  onboardingUrl: Link
}

/**
 * Issues a one-time enrollment for a new hub (the operator CLI, the partner API and the console all issue them
 * here): a random token (`enr_…`) and, when asked, a hosted onboarding link (`onb_…`), both single-use.
 */
export async function createEnrollment(
  enrollments: EnrollmentRepository,
  asked: EnrollmentAskedFor,
): Promise<NewEnrollment<null>>
export async function createEnrollment(
  enrollments: EnrollmentRepository,
  asked: EnrollmentAskedFor,
  onboarding: OnboardingLinkAskedFor,
): Promise<NewEnrollment<string>>
export async function createEnrollment(
  enrollments: EnrollmentRepository,
  asked: EnrollmentAskedFor,
  onboarding?: OnboardingLinkAskedFor,
): Promise<NewEnrollment> {
  const token = generateSecret('enr')
  const link = onboarding && { ...onboarding, token: generateSecret('onb') }
  const enrollment = await enrollments.create(
    asked.accountId,
    asked.name,
    hashSecret(token),
    new Date(Date.now() + asked.ttlHours * 3600_000),
    link && { hash: hashSecret(link.token), returnUri: link.returnUri, state: link.state },
  )
  return { enrollment, token, onboardingUrl: link ? `${link.publicUrl}/onboarding/${link.token}` : null }
}

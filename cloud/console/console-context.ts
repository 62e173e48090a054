import type { CloudConfig } from '../config.ts'
import type { DocumentIntake } from '../documents/intake.ts'
import type { JobEvents } from '../print-jobs/job-events.ts'
import type { PrintJobSubmitter } from '../print-jobs/submit.ts'
import type { Storage } from '../storage/storage.ts'
import type { WebhookEndpointAdmin } from '../webhooks/manage-endpoints.ts'

/** A person's role in an account (docs/console.md): an owner also manages users and API clients. */
export type UserRole = 'owner' | 'member'

/** The signed-in person of a console request. */
export interface ConsoleUser {
  userId: string
  accountId: string
  email: string
  role: UserRole
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the session support from the request's session cookie; null when nobody is signed in. */
    consoleUser: ConsoleUser | null
  }
}

/** The console's time: session expiries, sign-in throttling, link expiry. Tests inject one instead of sleeping. */
export interface ConsoleClock {
  /** Epoch milliseconds. */
  now(): number
  /** Waits (a slowed sign-in answer). */
  sleep(ms: number): Promise<void>
}

export const SYSTEM_CLOCK: ConsoleClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
}

/** What every console page module is registered with: the same storage and job rules as the API. */
export interface ConsoleOptions {
  storage: Storage
  config: CloudConfig
  submitter: PrintJobSubmitter
  jobEvents: JobEvents
  intake: DocumentIntake
  /** The account's webhook endpoints, with the API's checks (the Webhooks page). */
  webhooks: WebhookEndpointAdmin
  /** SYSTEM_CLOCK unless a test gives another. */
  clock: ConsoleClock
}

import { Type } from 'typebox'
import { int } from './setting-builders.ts'

/** Credentials and sign-in: token and link lifetimes, console sessions, and limits on failed attempts. */
export const ACCESS_SETTINGS = {
  accessTokenTtlSeconds: int(
    'ACCESS_TOKEN_TTL_SECONDS',
    60,
    86400,
    3600,
    'RFC 6749 §5.1 expires_in of access tokens',
  ),
  accessTokenSigningKey: Type.String({
    pattern: '^$|^[A-Za-z0-9+/]+={0,2}$',
    env: 'ACCESS_TOKEN_SIGNING_KEY',
    default: '',
    description:
      'Ed25519 key access tokens are signed with (RFC 9068 JWTs), PKCS#8 PEM in base64 (openssl genpkey ' +
      '-algorithm ed25519 | base64 -w0); the same on every node of one database; unset (default): ' +
      'DATA_DIR/access-token-signing.key, made on first use',
  }),
  tokenFailureWindowSeconds: int(
    'TOKEN_FAILURE_WINDOW_SECONDS',
    1,
    86400,
    900,
    'window of failed token requests',
  ),
  tokenFailuresPerIp: int(
    'TOKEN_FAILURES_PER_IP',
    1,
    1e6,
    20,
    'failed token requests per address per window',
  ),
  tokenFailuresPerClient: int(
    'TOKEN_FAILURES_PER_CLIENT',
    1,
    1e6,
    10,
    'failed token requests per client id and address per window',
  ),
  enrollmentTtlHours: int('ENROLLMENT_TTL_HOURS', 1, 24 * 90, 24, 'lifetime of an enrollment token'),
  consoleIdleMinutes: int(
    'CONSOLE_IDLE_MINUTES',
    1,
    24 * 60,
    30,
    'a console session ends after this long without a request (docs/console.md)',
  ),
  consoleSessionHours: int(
    'CONSOLE_SESSION_HOURS',
    1,
    24 * 30,
    12,
    'a console session ends this long after sign-in, however busy',
  ),
  consoleSignInFailuresPerIp: int(
    'CONSOLE_SIGN_IN_FAILURES_PER_IP',
    3,
    1_000_000,
    30,
    'failed console sign-ins from one address per 15 min before it is refused (slowed from a third of it)',
  ),
  consoleSignInFailuresPerEmail: int(
    'CONSOLE_SIGN_IN_FAILURES_PER_EMAIL',
    3,
    1_000_000,
    10,
    'failed console sign-ins for one e-mail per 15 min before it is refused (slowed from a third of it)',
  ),
  setPasswordTtlHours: int(
    'SET_PASSWORD_TTL_HOURS',
    1,
    24 * 30,
    72,
    'lifetime of a console user’s one-time set-password link',
  ),
}

import { type Static, Type } from 'typebox'

/**
 * The error body of every non-2xx answer (spec: Errors). `error` is the broad class — the RFC 6749 §5.2 /
 * RFC 6750 §3.1 value where one applies — and `error_code` the stable, specific code from the catalogue below.
 */
export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    error_code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'Error', additionalProperties: false },
)
export type ErrorBody = Static<typeof ErrorBody>

interface CatalogueEntry {
  readonly status: number
  readonly error: string
  readonly description: string
}

/** The catalogue of stable `error_code` values. Codes are never renamed or reused; new ones are additive. */
export const ERROR_CODES = {
  invalid_request: { status: 400, error: 'invalid_request', description: 'The request is malformed.' },
  invalid_url_request: {
    status: 400,
    error: 'invalid_request',
    description: 'document_url is not a well-formed absolute HTTPS URL without credentials.',
  },
  url_not_allowed: {
    status: 400,
    error: 'invalid_request',
    description:
      'document_url (or a redirect it led to) names or resolves to an address that is not public, or uses plain HTTP.',
  },
  invalid_base64: {
    status: 400,
    error: 'invalid_request',
    description: 'document_base64 is not canonical Base64 (a data: URL prefix is not accepted).',
  },
  unsupported_grant_type: {
    status: 400,
    error: 'unsupported_grant_type',
    description: 'Only grant_type=client_credentials is supported (RFC 6749 §4.4).',
  },
  invalid_scope: {
    status: 400,
    error: 'invalid_scope',
    description: 'The requested scope is unknown or exceeds the scopes granted to the client.',
  },
  invalid_client: {
    status: 401,
    error: 'invalid_client',
    description: 'Client authentication failed (unknown client, wrong secret or no credentials).',
  },
  invalid_token: {
    status: 401,
    error: 'invalid_token',
    description: 'The bearer token is missing, malformed, unknown or expired.',
  },
  hub_credential_invalid: {
    status: 401,
    error: 'invalid_token',
    description: "The hub's credential is missing or unknown (agent API).",
  },
  enrollment_token_invalid: {
    status: 401,
    error: 'invalid_grant',
    description: 'No enrollment has this token.',
  },
  insufficient_scope: {
    status: 403,
    error: 'insufficient_scope',
    description: 'The token lacks a scope the endpoint requires; details.required_scopes names it.',
  },
  not_found: { status: 404, error: 'not_found', description: 'No such route.' },
  installer_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No installer of that file name is in the current release catalog.',
  },
  print_job_not_found: { status: 404, error: 'not_found', description: 'No such print job in this account.' },
  document_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No such document, or none this hub prints (agent API).',
  },
  method_not_allowed: {
    status: 405,
    error: 'method_not_allowed',
    description:
      'The path exists but does not take this method; `Allow` and details.allowed_methods list those it takes.',
  },
  idempotency_key_conflict: {
    status: 409,
    error: 'conflict',
    description: 'The Idempotency-Key was already used with a different request.',
  },
  idempotency_request_in_progress: {
    status: 409,
    error: 'conflict',
    description: 'A request with this Idempotency-Key is still being processed; retry shortly.',
  },
  print_job_not_cancellable: {
    status: 409,
    error: 'conflict',
    description: 'Only pending or reserved jobs can be cancelled; details.status gives the current status.',
  },
  enrollment_claimed: {
    status: 409,
    error: 'conflict',
    description: 'The enrollment token was already used; tokens are single-use.',
  },
  enrollment_expired: { status: 409, error: 'conflict', description: 'The enrollment token has expired.' },
  enrollment_revoked: { status: 409, error: 'conflict', description: 'The enrollment was revoked.' },
  print_queue_full: {
    status: 409,
    error: 'conflict',
    description: 'The account already has as many unfinished print jobs as its queue capacity allows.',
  },
  unsupported_print_route: {
    status: 409,
    error: 'conflict',
    description:
      'The printer cannot take the document: details.reason is document_format_not_supported or raw_language_not_supported.',
  },
  document_too_large: {
    status: 413,
    error: 'payload_too_large',
    description: 'The document or request body exceeds the size limit; details.limit_bytes gives it.',
  },
  storage_quota_exceeded: {
    status: 413,
    error: 'payload_too_large',
    description:
      "The account's retained documents would exceed its storage quota; details.quota_bytes, used_bytes and document_bytes give the figures.",
  },
  unsupported_document_type: {
    status: 415,
    error: 'unsupported_media_type',
    description: 'The document is neither a PDF nor a RAW payload with a declared raw language.',
  },
  unsupported_content_type: {
    // A 400 (malformed request): the spec's 415 means a document type the service does not print.
    status: 400,
    error: 'invalid_request',
    description:
      'The request body has no Content-Type, or one this endpoint does not take (application/json; multipart/form-data for uploads; form-urlencoded for the token request).',
  },
  validation_failed: {
    status: 422,
    error: 'validation_failed',
    description:
      'Fields are missing, out of bounds, name nothing of this account or ask what the printer cannot do; details.fields lists every offending field.',
  },
  document_format_mismatch: {
    status: 422,
    error: 'validation_failed',
    description: 'The document bytes contradict the declared document_format or raw language.',
  },
  pdf_invalid: {
    status: 422,
    error: 'validation_failed',
    description: 'The PDF is not structurally sound or cannot be rendered.',
  },
  pdf_encrypted: {
    status: 422,
    error: 'validation_failed',
    description: 'The PDF is encrypted and needs a password to open.',
  },
  raw_command_forbidden: {
    status: 422,
    error: 'validation_failed',
    description:
      "The RAW payload holds a command that changes the printer's stored configuration, network settings or firmware; details.reason names it.",
  },
  document_fetch_failed: {
    status: 422,
    error: 'validation_failed',
    description: 'The remote document could not be fetched (timeout, refused, or a non-2xx answer).',
  },
  rate_limited: {
    status: 429,
    error: 'rate_limited',
    description: 'A quota was exceeded; see Retry-After and X-RateLimit-Scope.',
  },
  internal_error: {
    status: 500,
    error: 'internal_error',
    description: 'Unexpected error; nothing internal is revealed.',
  },
  range_not_satisfiable: {
    status: 416,
    error: 'range_not_satisfiable',
    description:
      'The Range asked for lies beyond the installer; Content-Range gives its size (RFC 9110 §15.5.17).',
  },
  release_catalog_unavailable: {
    status: 503,
    error: 'service_unavailable',
    description:
      'No release is published, or the stored catalog or an installer fails its check; retry after Retry-After seconds.',
  },
  not_ready: {
    status: 503,
    error: 'service_unavailable',
    description:
      'GET /readyz: this node cannot serve yet (details.not_ready names what: database, broker); send traffic elsewhere.',
  },
  shutting_down: {
    status: 503,
    error: 'service_unavailable',
    description:
      'This node is shutting down; retry after Retry-After seconds (another node, or this one restarted).',
  },
  inspection_unavailable: {
    status: 503,
    error: 'service_unavailable',
    description: 'Document security inspection could not run now; retry after Retry-After seconds.',
  },
  request_bodies_busy: {
    status: 503,
    error: 'service_unavailable',
    description:
      'The service is receiving as many request body bytes as it takes at once (MAX_BODY_BYTES_IN_FLIGHT); retry after Retry-After seconds.',
  },
  assertion_invalid: {
    status: 401,
    error: 'invalid_token',
    description:
      'The application assertion is missing or invalid (form, RS256 signature, iss, aud, iat, exp, jti); WWW-Authenticate says what.',
  },
  assertion_replayed: {
    status: 401,
    error: 'invalid_token',
    description: 'The application assertion was already used: each jti is accepted once; sign a new one.',
  },
  partner_capability_required: {
    status: 403,
    error: 'forbidden',
    description: 'The application has not been granted the partner capability.',
  },
  installation_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No installation of this application has that id.',
  },
  managed_account_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No managed account of this application has that relationship id.',
  },
  agent_enrollment_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No agent enrollment of this managed account has that id.',
  },
  agent_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No hub of this managed account has that id (or it was revoked).',
  },
  webhook_endpoint_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No webhook endpoint of this account has that id.',
  },
  webhook_delivery_not_found: {
    status: 404,
    error: 'not_found',
    description: 'No webhook delivery of this account has that id.',
  },
  webhook_endpoint_limit_reached: {
    status: 409,
    error: 'conflict',
    description:
      'The account already has as many webhook endpoints as it may (details.limit); delete one first.',
  },
  webhook_endpoint_disabled: {
    status: 409,
    error: 'conflict',
    description:
      'The webhook endpoint is disabled (details.disabled_reason: paused or failing) and sends nothing; enable it first.',
  },
  relationship_conflict: {
    status: 409,
    error: 'conflict',
    description:
      'This application already provisioned an account for that external_customer_id (under another Idempotency-Key); details.relationship_id names it.',
  },
  installation_inactive: {
    status: 422,
    error: 'validation_failed',
    description: 'The installation is inactive (its account is suspended or closed) and gets no tokens.',
  },
  permissions_not_approved: {
    status: 422,
    error: 'validation_failed',
    description:
      "The permissions asked for are not all among the installation's approved ones; details.not_approved lists them.",
  },
  account_action_not_allowed: {
    status: 422,
    error: 'validation_failed',
    description:
      'The managed account is in a state that does not allow this action (resume needs suspended; nothing but close on closed); details.state gives it.',
  },
  return_uri_not_allowed: {
    status: 422,
    error: 'validation_failed',
    description:
      'agent_onboarding.return_uri must be an absolute https URL without credentials or fragment (http only for localhost or 127.0.0.1).',
  },
  authorization_pending: {
    status: 400,
    error: 'authorization_pending',
    description:
      'RFC 8628 §3.5: nobody has typed this hub’s pairing code yet; poll again after the interval.',
  },
  slow_down: {
    status: 400,
    error: 'slow_down',
    description:
      'RFC 8628 §3.5: polled sooner than the interval; details.interval is the new interval (5 s longer).',
  },
  expired_token: {
    status: 400,
    error: 'expired_token',
    description: 'RFC 8628 §3.5: the pairing codes expired unused; ask for a new pairing.',
  },
  pairing_device_code_invalid: {
    status: 400,
    error: 'invalid_grant',
    description: 'No pairing has this device_code, or its credential was already handed out.',
  },
} as const satisfies Record<string, CatalogueEntry>

export type ErrorCode = keyof typeof ERROR_CODES

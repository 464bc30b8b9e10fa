/**
 * Stable error codes the Platform API adds to the engine's (src/engine/error-codes.ts). Each is a
 * problem+json `code` and derives its `type` URI; none is reworded once shipped.
 */
export const API_ERRORS = {
  /** No bearer API key, or one that is unknown or revoked. */
  UNAUTHENTICATED: "UNAUTHENTICATED",
  /** The key's role may not do this. */
  FORBIDDEN: "FORBIDDEN",
  /** No route matches the method and path (shipped with the role skeleton as NOT_FOUND). */
  ROUTE_NOT_FOUND: "NOT_FOUND",
  /** The body is not valid JSON. */
  MALFORMED_JSON: "MALFORMED_JSON",
  /** A body that is not `application/json`. */
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  /** The body is larger than `api.bodyLimitBytes`. */
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  /** A path parameter, query parameter, header or body failed its schema; `errors` lists each field. */
  REQUEST_INVALID: "REQUEST_INVALID",
  /** A signal name starting with `$` is reserved for the platform (approval decisions). */
  SIGNAL_NAME_RESERVED: "SIGNAL_NAME_RESERVED",
  /** The signal's payload failed the schema the workflow declares for it. */
  SIGNAL_INVALID: "SIGNAL_INVALID",
  /** The execution does not (now) wait for an approval of that name. */
  APPROVAL_NOT_PENDING: "APPROVAL_NOT_PENDING",
  /** The approval was already decided (quorum reached or rejected). */
  APPROVAL_ALREADY_DECIDED: "APPROVAL_ALREADY_DECIDED",
  /** This approver already voted on this approval. */
  APPROVAL_DUPLICATE_VOTE: "APPROVAL_DUPLICATE_VOTE",
  /** The key that started the execution may not vote on its approvals. */
  SELF_APPROVAL_FORBIDDEN: "SELF_APPROVAL_FORBIDDEN",
  /** Resume asked of an execution that is not suspended or held (it is running, waiting or finished). */
  EXECUTION_NOT_SUSPENDED: "EXECUTION_NOT_SUSPENDED",
  /** A bulk operation with an empty filter: it would act on every run of the organisation. */
  OPERATION_FILTER_EMPTY: "OPERATION_FILTER_EMPTY",
  /** A bulk operation whose filter matches more runs than `durable.operations.maxItems`. */
  OPERATION_TOO_LARGE: "OPERATION_TOO_LARGE",
  /** No bulk operation of the key's organisation has this id. */
  OPERATION_NOT_FOUND: "OPERATION_NOT_FOUND",
  /** Abort asked of a bulk operation that already ended (completed or aborted). */
  OPERATION_FINISHED: "OPERATION_FINISHED",
  /** Unpause asked of an execution that is not paused (`details.status` names what it is). */
  EXECUTION_NOT_PAUSED: "EXECUTION_NOT_PAUSED",
  /** Evidence export asked of an api with no `evidence.signingKey` configured. */
  EVIDENCE_SIGNING_DISABLED: "EVIDENCE_SIGNING_DISABLED",
  /** No asset of the key's organisation has this id (another organisation's answers the same). */
  ASSET_NOT_FOUND: "ASSET_NOT_FOUND",
  /** A mint of an asset that is not active (still paused: its token cannot mint yet). */
  ASSET_NOT_ACTIVE: "ASSET_NOT_ACTIVE",
  /** 429: this key's request budget (`api.rateLimit`) is spent; retry after `Retry-After` seconds. */
  RATE_LIMITED: "RATE_LIMITED",
  /**
   * 503 with `Retry-After`: the request got no PostgreSQL connection (`details.reason`:
   * `pool_timeout`, `too_many_connections`, `unreachable`; src/store/database-unavailable.ts), so
   * nothing it asked for was done and it may be sent again unchanged.
   */
  DATABASE_UNAVAILABLE: "DATABASE_UNAVAILABLE",
  /** 403 on /admin/queues: a platform-operator's board is read-only. */
  QUEUES_READ_ONLY: "QUEUES_READ_ONLY",
  /** A Bull Board change that is not one of the documented board actions (README, "Bull Board"). */
  QUEUES_ACTION_NOT_ALLOWED: "QUEUES_ACTION_NOT_ALLOWED",
  /** 403 on /admin/queues: a cookie-session request without the CSRF proof (same origin and token). */
  CSRF_REJECTED: "CSRF_REJECTED",
  /** No runner schedule of that name is registered (`details.schedule` names it). */
  SCHEDULE_NOT_FOUND: "SCHEDULE_NOT_FOUND",
  /** A trigger of a paused schedule: resume it first (`details.pausedAt`, `details.pausedBy`). */
  SCHEDULE_PAUSED: "SCHEDULE_PAUSED",
  /** A trigger while a run of the schedule holds a live lease (`details.window`, `details.attempt`). */
  SCHEDULE_RUNNING: "SCHEDULE_RUNNING",
  /** 503 with `Retry-After`: admission control refused the request before it did anything (src/api/admission.ts). */
  OVERLOADED: "OVERLOADED",
  /** Anything unexpected; the response never carries a stack trace. */
  INTERNAL: "INTERNAL",
} as const;

export type ApiErrorCode = (typeof API_ERRORS)[keyof typeof API_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    api: ApiErrorCode;
  }
}

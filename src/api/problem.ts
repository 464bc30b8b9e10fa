import type { NextFunction, Request, Response } from "express";
import { CHAIN_ERRORS, type ChainErrorCode } from "../chain/chain-error-codes.js";
import { ENGINE_ERRORS, type EngineErrorCode } from "../engine/error-codes.js";
import type { TenorErrorCode } from "../errors/error-code-registry.js";
import { LEDGER_INDEX_ERRORS, type LedgerIndexErrorCode } from "../errors/ledger-index-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import { WEBHOOK_ERRORS, type WebhookErrorCode } from "../errors/webhook-errors.js";
import type { Logger } from "../observability/logger.js";
import { type DatabaseUnavailableReason, databaseUnavailableReason } from "../store/database-unavailable.js";
import { API_ERRORS, type ApiErrorCode } from "./api-error-codes.js";

/** Base of every problem `type` URI: `https://tenor.dev/problems/<code in kebab case>`. */
export const PROBLEM_TYPE_BASE = "https://tenor.dev/problems/";

/** One invalid field of a request, for `errors` of a validation problem. */
export interface FieldError {
  /** Where: `body`, `query`, `path`, `header`, then the field's dotted path (`body.symbol`). */
  pointer: string;
  message: string;
}

/** An RFC 9457 problem document, plus Tenor's stable `code`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  retryable: boolean;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/**
 * Every code a route can answer with: those of the layers the API stands on. A code of another
 * layer (an application feature's, keyed serialization's, a value's) reaching the problem handler answers 500.
 */
export type ApiVisibleCode =
  | EngineErrorCode
  | ApiErrorCode
  | ChainErrorCode
  | LedgerIndexErrorCode
  | WebhookErrorCode;

/**
 * HTTP status per API-visible code. Exhaustive by type: a new code in one of those layers does not
 * compile until it is given its status here (test/api/problem-status.test-d.ts).
 */
export const STATUS_BY_CODE = {
  // The engine's codes. A 500 is listed on purpose: a fault of Tenor or of a process, never the request's.
  [ENGINE_ERRORS.WORKFLOW_UNKNOWN]: 404,
  [ENGINE_ERRORS.WORKFLOW_VERSION_UNAVAILABLE]: 500,
  [ENGINE_ERRORS.WORKFLOW_NOT_REGISTERED]: 500,
  [ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID]: 500,
  [ENGINE_ERRORS.ACTIVITY_UNKNOWN]: 500,
  [ENGINE_ERRORS.INPUT_INVALID]: 422,
  [ENGINE_ERRORS.OUTPUT_INVALID]: 500,
  [ENGINE_ERRORS.NON_DETERMINISM]: 500,
  [ENGINE_ERRORS.RECOVERY_EXHAUSTED]: 500,
  [ENGINE_ERRORS.WORKFLOW_CODE_ERROR]: 500,
  [ENGINE_ERRORS.RESULT_NOT_STORABLE]: 500,
  [ENGINE_ERRORS.OUTPUT_NOT_STORABLE]: 500,
  [ENGINE_ERRORS.VALUE_NOT_STORABLE]: 400,
  [ENGINE_ERRORS.CHILD_FAILED]: 500,
  [ENGINE_ERRORS.TURN_FENCED]: 500,
  [ENGINE_ERRORS.IDEMPOTENCY_KEY_REUSED]: 422,
  [ENGINE_ERRORS.EXECUTION_NOT_FOUND]: 404,
  [ENGINE_ERRORS.EXECUTION_TERMINAL]: 409,
  [ENGINE_ERRORS.EXECUTION_NOT_RESETTABLE]: 409,
  [ENGINE_ERRORS.RESET_POSITION_OUT_OF_RANGE]: 422,
  [ENGINE_ERRORS.RESET_SETS_ASIDE_DISPATCHED]: 409,
  [ENGINE_ERRORS.RESET_PREFIX_NOT_REPLAYABLE]: 409,
  [ENGINE_ERRORS.STEP_RESULT_NOT_SERIALIZABLE]: 500,
  [ENGINE_ERRORS.DURATION_INVALID]: 500,
  [ENGINE_ERRORS.CANCELLED]: 500,
  [ENGINE_ERRORS.APPROVAL_PARAMS_CHANGED]: 409,
  [ENGINE_ERRORS.KEYED_ADMISSION_MISSING]: 500,
  [ENGINE_ERRORS.REFUSED]: 500,
  [ENGINE_ERRORS.SERVICE_MISSING]: 500,
  [ENGINE_ERRORS.SERVICE_PROVIDED_TWICE]: 500,
  [ENGINE_ERRORS.SERVICE_NOT_DECLARED]: 500,
  [ENGINE_ERRORS.SERVICE_UNAVAILABLE]: 500,
  // The API's own codes.
  [API_ERRORS.UNAUTHENTICATED]: 401,
  [API_ERRORS.FORBIDDEN]: 403,
  [API_ERRORS.ROUTE_NOT_FOUND]: 404,
  [API_ERRORS.MALFORMED_JSON]: 400,
  [API_ERRORS.UNSUPPORTED_MEDIA_TYPE]: 415,
  [API_ERRORS.PAYLOAD_TOO_LARGE]: 413,
  [API_ERRORS.REQUEST_INVALID]: 400,
  [API_ERRORS.SIGNAL_NAME_RESERVED]: 403,
  [API_ERRORS.SIGNAL_INVALID]: 422,
  [API_ERRORS.APPROVAL_NOT_PENDING]: 409,
  [API_ERRORS.APPROVAL_ALREADY_DECIDED]: 409,
  [API_ERRORS.APPROVAL_DUPLICATE_VOTE]: 409,
  [API_ERRORS.SELF_APPROVAL_FORBIDDEN]: 403,
  [API_ERRORS.EXECUTION_NOT_SUSPENDED]: 409,
  [API_ERRORS.EXECUTION_NOT_PAUSED]: 409,
  [API_ERRORS.EVIDENCE_SIGNING_DISABLED]: 503,
  [API_ERRORS.ASSET_NOT_FOUND]: 404,
  [API_ERRORS.ASSET_NOT_ACTIVE]: 409,
  [API_ERRORS.RATE_LIMITED]: 429,
  [API_ERRORS.DATABASE_UNAVAILABLE]: 503,
  [API_ERRORS.QUEUES_READ_ONLY]: 403,
  [API_ERRORS.QUEUES_ACTION_NOT_ALLOWED]: 403,
  [API_ERRORS.CSRF_REJECTED]: 403,
  [API_ERRORS.OVERLOADED]: 500,
  [API_ERRORS.SCHEDULE_NOT_FOUND]: 404,
  [API_ERRORS.SCHEDULE_PAUSED]: 409,
  [API_ERRORS.SCHEDULE_RUNNING]: 409,
  [API_ERRORS.OPERATION_FILTER_EMPTY]: 400,
  [API_ERRORS.OPERATION_TOO_LARGE]: 422,
  [API_ERRORS.OPERATION_NOT_FOUND]: 404,
  [API_ERRORS.OPERATION_FINISHED]: 409,
  [API_ERRORS.INTERNAL]: 500,
  // The chain boundary's codes.
  [CHAIN_ERRORS.CHAIN_UNKNOWN]: 404,
  [CHAIN_ERRORS.SIGNER_UNKNOWN]: 500,
  [CHAIN_ERRORS.RPC_UNAVAILABLE]: 503,
  [CHAIN_ERRORS.GAS_REQUIRED]: 500,
  [CHAIN_ERRORS.ENTRYPOINT_UNRESOLVED]: 500,
  [CHAIN_ERRORS.ENTRYPOINT_NOT_RESOLVED_ADDRESS]: 500,
  [CHAIN_ERRORS.ATTRIBUTION_INVALID]: 500,
  [CHAIN_ERRORS.CUSTODY_UNAVAILABLE]: 500,
  [CHAIN_ERRORS.CUSTODY_REFUSED]: 500,
  [CHAIN_ERRORS.CUSTODY_REJECTED]: 500,
  [CHAIN_ERRORS.CUSTODY_POLL_BUDGET_EXHAUSTED]: 500,
  [CHAIN_ERRORS.TX_STUCK]: 500,
  [CHAIN_ERRORS.TX_REFUSED]: 500,
  [CHAIN_ERRORS.USER_OPERATION_REFUSED]: 500,
  [CHAIN_ERRORS.USER_OPERATION_REVERTED]: 500,
  [CHAIN_ERRORS.DEPLOYMENT_REFUSED]: 500,
  // The Ledger Index's codes.
  [LEDGER_INDEX_ERRORS.LEDGER_SCOPE_INVALID]: 422,
  [LEDGER_INDEX_ERRORS.LEDGER_SCOPE_DUPLICATE]: 409,
  [LEDGER_INDEX_ERRORS.LEDGER_SCOPE_NOT_FOUND]: 404,
  [LEDGER_INDEX_ERRORS.LEDGER_CURSOR_MOVED]: 500,
  [LEDGER_INDEX_ERRORS.LEDGER_REORG_TOO_DEEP]: 500,
  [LEDGER_INDEX_ERRORS.LEDGER_RANGE_LEASE_LOST]: 500,
  [LEDGER_INDEX_ERRORS.LEDGER_LOGS_UNVERIFIED]: 500,
  [LEDGER_INDEX_ERRORS.LEDGER_REWIND_INVALID]: 500,
  [LEDGER_INDEX_ERRORS.LEDGER_NOT_INDEXED]: 503,
  // Webhooks' codes.
  [WEBHOOK_ERRORS.WEBHOOK_URL_REFUSED]: 500,
  [WEBHOOK_ERRORS.WEBHOOK_SUBSCRIPTION_NOT_FOUND]: 404,
  [WEBHOOK_ERRORS.WEBHOOK_DELIVERY_NOT_FOUND]: 404,
  [WEBHOOK_ERRORS.WEBHOOK_DELIVERY_PENDING]: 409,
  [WEBHOOK_ERRORS.WEBHOOK_SIGNATURE_INVALID]: 500,
  [WEBHOOK_ERRORS.WEBHOOK_SECRET_KEY_MISSING]: 503,
  [WEBHOOK_ERRORS.WEBHOOK_SECRET_UNREADABLE]: 500,
  [WEBHOOK_ERRORS.WEBHOOK_ADDRESS_REFUSED]: 500,
  // Organisation deployment's codes.
} as const satisfies Record<ApiVisibleCode, number>;

const TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The status of `code`: its entry in STATUS_BY_CODE, 500 for a code no route should answer with. */
export function statusForCode(code: string): number {
  return Object.hasOwn(STATUS_BY_CODE, code) ? STATUS_BY_CODE[code as ApiVisibleCode] : 500;
}

/** `INPUT_INVALID` → `https://tenor.dev/problems/input-invalid`. */
export function problemType(code: string): string {
  return `${PROBLEM_TYPE_BASE}${code.toLowerCase().replace(/_/g, "-")}`;
}

/**
 * The problem document for an error. A TenorError keeps its code, message and details (field
 * `errors` when it carries issues); anything else becomes INTERNAL with a generic detail, never
 * its message or stack (they may name internals).
 */
export function toProblem(error: unknown, instance: string): Problem {
  if (!(error instanceof TenorError)) {
    return {
      type: problemType(API_ERRORS.INTERNAL),
      title: TITLES[500] as string,
      status: 500,
      detail: "an unexpected error occurred; it was logged",
      instance,
      code: API_ERRORS.INTERNAL,
      retryable: true,
    };
  }
  const status = statusForCode(error.code);
  const { errors, issues, ...details } = error.details as { errors?: FieldError[]; issues?: unknown };
  const problem: Problem = {
    type: problemType(error.code),
    title: TITLES[status] ?? "Error",
    status,
    detail: status === 500 ? "an unexpected error occurred; it was logged" : error.message,
    instance,
    code: status === 500 ? API_ERRORS.INTERNAL : error.code,
    retryable: error.retryable,
  };
  if (status === 500) return problem;
  const fieldErrors = errors ?? issuesToFieldErrors(issues, "body");
  if (fieldErrors) problem.errors = fieldErrors;
  if (Object.keys(details).length > 0) problem.details = details;
  return problem;
}

/** The engine's `issues` ({ path, message }) as field errors under `prefix`. */
function issuesToFieldErrors(issues: unknown, prefix: string): FieldError[] | undefined {
  if (!Array.isArray(issues)) return undefined;
  return issues.map((issue: { path?: string; message?: string }) => ({
    pointer: issue.path ? `${prefix}.${issue.path}` : prefix,
    message: issue.message ?? "invalid",
  }));
}

export function sendProblem(res: Response, problem: Problem): void {
  // The audit trail records a refusal under its stable code (src/api/audit/audit-trail.ts).
  res.locals.problemCode = problem.code;
  if (problem.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="tenor"');
  res.status(problem.status).type("application/problem+json").send(JSON.stringify(problem));
}

/** Throws a TenorError for the API's own refusals. */
export function apiError(
  code: TenorErrorCode,
  message: string,
  details: Record<string, unknown> = {},
): TenorError {
  return new TenorError(code, message, { details });
}

/** Body-parser failures (malformed JSON, too large) carry a `type`; map them to stable codes. */
function fromBodyParser(error: unknown, request?: Request): TenorError | null {
  const e = error as { type?: string; limit?: number; expose?: boolean };
  if (e?.type === "entity.parse.failed")
    return apiError(API_ERRORS.MALFORMED_JSON, "the request body is not valid JSON");
  if (e?.type === "entity.too.large") {
    return apiError(API_ERRORS.PAYLOAD_TOO_LARGE, `the request body exceeds ${e.limit} bytes`, {
      limitBytes: e.limit,
    });
  }
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") {
    return apiError(
      API_ERRORS.UNSUPPORTED_MEDIA_TYPE,
      "the request body's encoding or charset is not supported",
    );
  }
  // A body that does not decompress as its Content-Encoding says: zlib's error codes are Z_*.
  const zlibCode = (error as { code?: unknown })?.code;
  if (typeof zlibCode === "string" && zlibCode.startsWith("Z_") && !(error instanceof TenorError)) {
    const encoding = String(request?.headers["content-encoding"] ?? "its Content-Encoding");
    const message = `is not valid ${encoding} data (${(error as Error).message})`;
    return apiError(API_ERRORS.REQUEST_INVALID, `the request body ${message}`, {
      errors: [{ pointer: "header.content-encoding", message }],
    });
  }
  // Express refuses a path parameter that is not valid percent-encoding with a plain 400 error.
  if ((error as { status?: number })?.status === 400 && !(error instanceof TenorError)) {
    return apiError(API_ERRORS.REQUEST_INVALID, "the request URL is not valid percent-encoding", {
      errors: [{ pointer: "path", message: "invalid percent-encoding" }],
    });
  }
  return null;
}

const UNAVAILABLE_DETAIL: Readonly<Record<DatabaseUnavailableReason, string>> = {
  pool_timeout: "every database connection of this server stayed busy; nothing was done, retry later",
  too_many_connections: "the database refused a new connection at its limit; nothing was done, retry later",
  unreachable: "the database could not be reached; nothing was done, retry later",
};

/**
 * A request that got no database connection is the server's capacity or an outage, not a fault
 * of the request or of Tenor: 503 DATABASE_UNAVAILABLE with Retry-After, never 500 INTERNAL.
 */
function fromDatabase(error: unknown, retryAfterSeconds: number): TenorError | null {
  if (error instanceof TenorError) return null;
  const reason = databaseUnavailableReason(error);
  if (reason === null) return null;
  return new TenorError(API_ERRORS.DATABASE_UNAVAILABLE, UNAVAILABLE_DETAIL[reason], {
    retryable: true,
    details: { reason, retryAfterSeconds },
    cause: error,
  });
}

export interface ProblemHandlerOptions {
  /** `Retry-After` of a 503 DATABASE_UNAVAILABLE, in seconds (`api.admission.retryAfterSeconds`). */
  retryAfterSeconds: number;
}

/** The last middleware: every error leaves as problem+json; unexpected ones are logged without payloads. */
export function problemHandler(logger: Logger, options: ProblemHandlerOptions) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const mapped = fromBodyParser(error, req) ?? fromDatabase(error, options.retryAfterSeconds) ?? error;
    const problem = toProblem(mapped, req.originalUrl);
    if (problem.status >= 500) {
      logger.error("request failed", {
        method: req.method,
        path: req.path,
        code: mapped instanceof TenorError ? mapped.code : API_ERRORS.INTERNAL,
        error: mapped instanceof Error ? mapped.message : String(mapped),
      });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (problem.code === API_ERRORS.DATABASE_UNAVAILABLE)
      res.setHeader("Retry-After", String(options.retryAfterSeconds));
    sendProblem(res, problem);
  };
}

/** Unknown routes: problem+json 404, never Express's HTML page. */
export function routeNotFound(req: Request, res: Response): void {
  sendProblem(
    res,
    toProblem(
      apiError(API_ERRORS.ROUTE_NOT_FOUND, `no route for ${req.method} ${req.path}`),
      req.originalUrl,
    ),
  );
}

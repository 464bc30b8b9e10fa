import { TenorError } from "../errors/tenor-error.js";
import { describePath, escapeText, escapeUnstorable, findUnstorable } from "../values/storable.js";
import { ENGINE_ERRORS } from "./error-codes.js";

/** The JSON shape of a failure in the journal and in the status projection. */
export interface FailureRecord {
  code: string;
  message: string;
  retryable: boolean;
  details: Record<string, unknown>;
  /** Class name, so a journaled refusal is re-raised as the same class on replay. */
  name?: string;
  /**
   * Paths in this record whose text PostgreSQL could not store as given (U+0000, a lone
   * surrogate): stored with those characters written out as visible escapes (`\u0000`).
   */
  escaped?: string[];
}

/**
 * A business outcome: a refusal, an expired approval, `GAS_REQUIRED`. Thrown from a step it is
 * journaled as that step's result and re-raised identically on replay; thrown from the body it
 * ends the run `failed` with its code. Never retried by the engine.
 */
/** Its code is the workflow's own: any stable string, registered or not. */
export class BusinessError extends TenorError<string> {
  constructor(code: string, message: string, details: Record<string, unknown> = {}, retryable = false) {
    super(code, message, { details, retryable });
  }

  static fromRecord(record: FailureRecord): BusinessError {
    const error = new BusinessError(record.code, record.message, record.details, record.retryable);
    if (record.name) error.name = record.name;
    return error;
  }
}

/** Raised in the parent when a child workflow fails; carries the child's failure unchanged. */
export class ChildWorkflowError extends BusinessError {
  readonly childExecutionId: string;
  readonly childFailure: FailureRecord;

  constructor(childExecutionId: string, childFailure: FailureRecord) {
    super(
      ENGINE_ERRORS.CHILD_FAILED,
      `child execution ${childExecutionId} failed with ${childFailure.code}: ${childFailure.message}`,
      { childExecutionId, childFailure },
    );
    this.childExecutionId = childExecutionId;
    this.childFailure = childFailure;
  }
}

/**
 * The journal disagrees with the code at a position: hold, do not fail (docs/engine.md,
 * "Non-determinism").
 */
export class NonDeterminismError extends TenorError {
  constructor(
    position: number,
    expected: { kind: string; name: string; cause?: number },
    found: { kind: string; name: string; cause?: number },
  ) {
    const order =
      expected.cause !== undefined && found.cause !== undefined
        ? ` after delivery ${expected.cause}, but the code now calls it after delivery ${found.cause} ` +
          "(its branch resumed in another order)"
        : "";
    const message = order
      ? `journal position ${position} recorded ${expected.kind} "${expected.name}"${order}`
      : `journal position ${position} recorded ${expected.kind} "${expected.name}" but the code now calls ` +
        `${found.kind} "${found.name}"`;
    super(
      ENGINE_ERRORS.NON_DETERMINISM,
      `${message}; the execution is held until code that replays it is deployed`,
      { details: { position, recorded: expected, code: found } },
    );
  }
}

/** A write carried a stale fencing token: another runner owns the execution now. */
export class TurnFencedError extends TenorError {
  constructor(executionId: string, turn: number, what: string) {
    super(
      ENGINE_ERRORS.TURN_FENCED,
      `turn ${turn} of execution ${executionId} is stale; refused to write ${what}`,
      {
        details: { executionId, turn, what },
      },
    );
  }
}

/** Converts any thrown value into the failure record stored for it (see storableFailure). */
export function toFailureRecord(error: unknown, fallbackCode: string): FailureRecord {
  if (error instanceof TenorError) {
    return storableFailure({
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      details: { ...error.details },
      name: error.name,
    });
  }
  if (error instanceof Error) {
    return storableFailure({
      code: fallbackCode,
      message: error.message,
      retryable: false,
      details: { errorName: error.name },
      name: error.name,
    });
  }
  return storableFailure({ code: fallbackCode, message: String(error), retryable: false, details: {} });
}

/**
 * A failure is always recorded: text PostgreSQL cannot store (U+0000, a lone surrogate) is
 * written out as visible escapes and the record lists the paths it changed in `escaped`, so a
 * failure never makes its own record unwritable (docs/engine.md, "What PostgreSQL can store").
 */
export function storableFailure(record: FailureRecord): FailureRecord {
  if (findUnstorable(record) === null) return record;
  const { value, escaped } = escapeUnstorable(record);
  return { ...(value as FailureRecord), escaped: [...(record.escaped ?? []), ...escaped] };
}

/**
 * Refuses a value the body hands to the engine that PostgreSQL cannot store, with `code` and the
 * path of the offending part (`what` names the value: `input of child workflow "x"`).
 */
export function assertStorable(
  what: string,
  value: unknown,
  code: string = ENGINE_ERRORS.VALUE_NOT_STORABLE,
  maxBytes?: number,
  details: Record<string, unknown> = {},
): void {
  const found = findUnstorable(value, maxBytes === undefined ? {} : { maxBytes });
  if (!found) return;
  throw new BusinessError(code, `${what} cannot be stored: ${describePath(found.path)} ${found.reason}`, {
    ...details,
    path: describePath(found.path),
    rule: found.rule,
  });
}

/**
 * The refusal a step's or an activity's result gets when PostgreSQL cannot store it
 * (RESULT_NOT_STORABLE, naming the path), or null when it can: decided before any row is written,
 * so the body sees one typed outcome that the journal holds and every replay re-raises.
 */
export function unstorableResult(
  step: string,
  position: number,
  result: unknown,
  maxBytes: number,
): BusinessError | null {
  const found = findUnstorable(result, { maxBytes });
  if (!found) return null;
  const path = describePath(found.path);
  return new BusinessError(
    ENGINE_ERRORS.RESULT_NOT_STORABLE,
    `step "${escapeText(step)}" at position ${position} returned a value PostgreSQL cannot store: ` +
      `${path} ${found.reason}; it fails once and is not retried`,
    { step, position, path, rule: found.rule },
  );
}

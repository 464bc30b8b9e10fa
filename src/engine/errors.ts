import { TenorError } from "../errors/tenor-error.js";
import { ENGINE_ERRORS } from "./error-codes.js";

/** The JSON shape of a failure in the journal and in the status projection. */
export interface FailureRecord {
  code: string;
  message: string;
  retryable: boolean;
  details: Record<string, unknown>;
  /** Class name, so a journaled refusal is re-raised as the same class on replay. */
  name?: string;
}

/**
 * A business outcome: a refusal, an expired approval, `GAS_REQUIRED`. Thrown from a step it is
 * journaled as that step's result and re-raised identically on replay; thrown from the body it
 * ends the run `failed` with its code. Never retried by the engine.
 */
export class BusinessError extends TenorError {
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

/** Converts any thrown value into the failure record stored for it. */
export function toFailureRecord(error: unknown, fallbackCode: string): FailureRecord {
  if (error instanceof TenorError) {
    return {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      details: { ...error.details },
      name: error.name,
    };
  }
  if (error instanceof Error) {
    return {
      code: fallbackCode,
      message: error.message,
      retryable: false,
      details: { errorName: error.name },
      name: error.name,
    };
  }
  return { code: fallbackCode, message: String(error), retryable: false, details: {} };
}

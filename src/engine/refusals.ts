import { TenorError } from "../errors/tenor-error.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { BusinessError, type FailureRecord, storableFailure } from "./errors.js";

/** A class a step or activity names as non-retryable (a refusal). */
export type ErrorClass = abstract new (...args: never[]) => Error;

/** A refusal is journaled as the step's outcome; anything else is transient and retried. */
export function isRefusal(error: unknown, nonRetryable: readonly ErrorClass[] | undefined): boolean {
  if (error instanceof BusinessError) return true;
  if (error instanceof TenorError && !error.retryable) return true;
  return nonRetryable?.some((cls) => error instanceof cls) ?? false;
}

/** The journal record of a refusal: code, message, details and class name. */
export function refusalRecord(error: unknown): FailureRecord {
  if (error instanceof TenorError) return storableFailure({ ...error.toJSON(), name: error.name });
  const e = error as Error & { code?: unknown; details?: unknown };
  return storableFailure({
    code: typeof e.code === "string" ? e.code : (e.name ?? ENGINE_ERRORS.REFUSED),
    message: e.message,
    retryable: false,
    details:
      typeof e.details === "object" && e.details !== null ? (e.details as Record<string, unknown>) : {},
    // The class name, not `name` (which an Error subclass leaves as "Error"): replay revives by it.
    name: e.constructor?.name && e.constructor !== Error ? e.constructor.name : e.name,
  });
}

/** Re-raises a journaled refusal as the same class when the step names it, else as BusinessError. */
export function reviveRefusal(record: FailureRecord, nonRetryable: readonly ErrorClass[] | undefined): Error {
  const cls = nonRetryable?.find((c) => c.name === record.name);
  if (!cls) return BusinessError.fromRecord(record);
  const revived = Object.create(cls.prototype) as Error & Record<string, unknown>;
  Object.assign(revived, {
    message: record.message,
    name: record.name,
    code: record.code,
    details: record.details,
  });
  Object.defineProperty(revived, "retryable", { value: false, enumerable: true });
  revived.stack = `${record.name}: ${record.message}\n    (revived from the journal)`;
  return revived;
}

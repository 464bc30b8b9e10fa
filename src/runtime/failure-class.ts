import { ENGINE_ERRORS } from "../engine/error-codes.js";
import type { FailureRecord } from "../engine/errors.js";

/**
 * The bounded classes a failed execution is counted under (`tenor_execution_failures_total`):
 * failure codes are open-ended (every workflow adds its own), classes are not.
 * - `business`: the workflow refused (a BusinessError: an expired approval, GAS_REQUIRED).
 * - `child`: a child workflow failed and the parent let it end the run.
 * - `cancelled`: cancelled through the API.
 * - `nondeterminism`: the code no longer replays its journal.
 * - `recovery_exhausted`: infrastructure failures past `durable.recovery`.
 * - `error`: anything else the body threw.
 */
export const FAILURE_CLASSES = [
  "business",
  "child",
  "cancelled",
  "nondeterminism",
  "recovery_exhausted",
  "error",
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

export function failureClass(failure: Pick<FailureRecord, "code" | "name">): FailureClass {
  if (failure.code === ENGINE_ERRORS.CANCELLED) return "cancelled";
  if (failure.code === ENGINE_ERRORS.NON_DETERMINISM) return "nondeterminism";
  if (failure.code === ENGINE_ERRORS.RECOVERY_EXHAUSTED) return "recovery_exhausted";
  if (failure.name === "ChildWorkflowError") return "child";
  if (failure.name === "BusinessError") return "business";
  return "error";
}

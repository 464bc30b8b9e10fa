import { z } from "zod";
import { TenorError } from "../errors/tenor-error.js";
import { canonicalHash } from "./canonical-json.js";
import type { SignalWait, WaitDeadline } from "./context-types.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { assertStorable, BusinessError } from "./errors.js";

/**
 * Identity-bound approvals (docs/engine.md, "Cancellation and approvals"). A workflow asks with
 * `ctx.waitForApproval(name, { params })`; the wait is a signal wait on the reserved signal
 * `$approval:<name>` that the status projection shows as kind "approval" with the parameters, their
 * hash and the quorum. The API records each approver's vote (role, no self-approval, no double
 * vote, bound to the hash) and delivers the decision signal once the quorum is reached or one
 * approver rejects. Only the API delivers it: signal names starting with `$` are refused on the
 * public signals route.
 */

/** Prefix of the reserved signal that carries an approval decision. */
export const APPROVAL_SIGNAL_PREFIX = "$approval:";

export function approvalSignalName(name: string): string {
  return `${APPROVAL_SIGNAL_PREFIX}${name}`;
}

/** SHA-256 (hex) of the canonical JSON of the parameters an approver is shown. */
export function hashApprovalParams(params: unknown): string {
  return canonicalHash(params);
}

/** Who cast a vote: the API key's id and name, and the role it acted in. */
export const Approver = z.object({
  keyId: z.string(),
  name: z.string(),
  role: z.string(),
  at: z.string(),
});
export type Approver = z.infer<typeof Approver>;

/** The payload of the decision signal the API delivers. */
export const ApprovalDecisionPayload = z.discriminatedUnion("approved", [
  z.object({ approved: z.literal(true), paramsHash: z.string(), approvers: z.array(Approver) }),
  z.object({
    approved: z.literal(false),
    paramsHash: z.string(),
    rejectedBy: Approver,
    reason: z.string().nullable(),
  }),
]);
export type ApprovalDecisionPayload = z.infer<typeof ApprovalDecisionPayload>;

export interface ApprovalOptions extends WaitDeadline {
  /** Exactly what the approvers are shown and approve; JSON-safe (encode typed values first). */
  params: Record<string, unknown>;
  /** Distinct approvers needed (M of N). Default 1. */
  quorum?: number;
}

export type ApprovalOutcome =
  | { timedOut: false; approved: true; approvers: Approver[] }
  | { timedOut: false; approved: false; rejectedBy: Approver; reason: string | null }
  | { timedOut: true; approved: false };

/** What the status projection shows under `details` of an approval wait. */
export interface ApprovalWaitDetails {
  params: Record<string, unknown>;
  paramsHash: string;
  quorum: number;
}

/** The body of `ctx.waitForApproval`; a decision journaled for other parameters is refused. */
export async function waitForApproval(
  waitForSignal: SignalWait,
  name: string,
  options: ApprovalOptions,
): Promise<ApprovalOutcome> {
  const quorum = options.quorum ?? 1;
  if (!Number.isInteger(quorum) || quorum < 1) {
    throw new TenorError(
      ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
      `approval "${name}": quorum ${String(quorum)} must be an integer ≥ 1`,
      { details: { approval: name, quorum } },
    );
  }
  // Shown to approvers from the status projection: refused before the wait takes its position.
  assertStorable(`the parameters of approval "${name}"`, options.params, undefined, undefined, {
    approval: name,
  });
  const paramsHash = hashApprovalParams(options.params);
  const details: ApprovalWaitDetails = { params: options.params, paramsHash, quorum };
  const result = await waitForSignal(approvalSignalName(name), {
    schema: ApprovalDecisionPayload,
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    presentAs: { kind: "approval", name, details: { ...details } },
  });
  if (result.timedOut) return { timedOut: true, approved: false };
  const decision = result.payload;
  if (decision.paramsHash !== paramsHash) {
    // Replay with code that now asks approval for other parameters: the recorded decision does not cover them.
    throw new BusinessError(
      ENGINE_ERRORS.APPROVAL_PARAMS_CHANGED,
      `approval "${name}" was decided for parameters ${decision.paramsHash}, but the workflow now asks for ${paramsHash}`,
      { approval: name, decidedHash: decision.paramsHash, currentHash: paramsHash },
    );
  }
  if (decision.approved) return { timedOut: false, approved: true, approvers: decision.approvers };
  return { timedOut: false, approved: false, rejectedBy: decision.rejectedBy, reason: decision.reason };
}

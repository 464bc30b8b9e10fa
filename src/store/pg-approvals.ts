import type { Pool, PoolClient } from "pg";
import type { ApiRole } from "../auth/api-roles.js";
import {
  type ApprovalDecisionPayload,
  type ApprovalWaitDetails,
  type Approver,
  approvalSignalName,
} from "../engine/approvals.js";
import type { WaitDescriptor } from "../engine/execution-store.js";
import { json } from "./json-param.js";
import { fromStoredRole } from "./pg-api-keys.js";
import { prismaFor } from "./prisma.js";
import { withTransaction } from "./with-transaction.js";

export interface VoteRequest {
  orgId: string;
  executionId: string;
  /** The approval's name, as the workflow asked for it. */
  name: string;
  /** `subject`: the person or system behind the key; one subject counts once towards a quorum. */
  approver: { keyId: string; name: string; role: ApiRole; subject: string };
  decision: "approve" | "reject";
  /** The hash of the parameters the approver was shown. */
  paramsHash: string;
  reason: string | null;
}

export interface PendingApproval {
  name: string;
  position: number;
  details: ApprovalWaitDetails;
}

export type VoteOutcome =
  | { kind: "not-found" }
  | { kind: "self-approval" }
  | { kind: "not-pending"; status: string; pending: string[] }
  | { kind: "decided"; position: number }
  | { kind: "params-changed"; pending: PendingApproval }
  | { kind: "duplicate"; previous: { decision: string; at: string } }
  | {
      kind: "recorded";
      workflow: string;
      pending: PendingApproval;
      approvals: number;
      /** Every vote cast on this approval at its pending position, this one included, oldest first. */
      votes: VoteRecord[];
      /** Set when this vote decided the approval; the decision signal is stored in the same transaction. */
      decision: ApprovalDecisionPayload | null;
    };

export interface VoteRecord {
  name: string;
  position: number;
  approver: Approver;
  /** The person or system the voting key was issued to. */
  subject: string;
  decision: "approve" | "reject";
  paramsHash: string;
  reason: string | null;
}

/**
 * Approval votes on PostgreSQL. A vote is one transaction under the execution's row lock, so
 * concurrent votes count the quorum one after the other and exactly one of them stores the
 * decision signal (also kept unique by its idempotency key, one per approval position).
 */
export class PgApprovals {
  constructor(private readonly pool: Pool) {}

  async vote(request: VoteRequest): Promise<VoteOutcome> {
    return this.transaction(async (client) => {
      const { rows } = await client.query(
        // The initiator's subject: a person may not approve what they started with any of their keys.
        `SELECT e.workflow, e.status::text AS status, e.waiting_for, e.created_by, k.subject AS created_by_subject
         FROM executions e LEFT JOIN api_keys k ON k.id = e.created_by
         WHERE e.id = $1 AND e.org_id = $2 FOR UPDATE OF e`,
        [request.executionId, request.orgId],
      );
      const execution = rows[0];
      if (!execution) return { kind: "not-found" };
      if (
        (execution.created_by !== null && execution.created_by === request.approver.keyId) ||
        (execution.created_by_subject !== null && execution.created_by_subject === request.approver.subject)
      ) {
        return { kind: "self-approval" };
      }
      const waits = (execution.waiting_for ?? []) as WaitDescriptor[];
      const approvals = waits.filter((w) => w.kind === "approval");
      const wait = approvals.find((w) => w.name === request.name);
      // Only a parked execution: its pending position is certain to consume the decision next turn.
      if (execution.status !== "waiting" || !wait || wait.position === undefined) {
        return {
          kind: "not-pending",
          status: execution.status,
          pending: execution.status === "waiting" ? approvals.map((w) => w.name) : [],
        };
      }
      const pending: PendingApproval = {
        name: wait.name,
        position: wait.position,
        details: wait.details as unknown as ApprovalWaitDetails,
      };
      const decisionKey = `${approvalSignalName(request.name)}@${pending.position}`;
      const decided = await client.query(
        "SELECT 1 FROM signals WHERE execution_id = $1 AND idempotency_key = $2",
        [request.executionId, decisionKey],
      );
      if ((decided.rowCount ?? 0) > 0) return { kind: "decided", position: pending.position };
      if (request.paramsHash !== pending.details.paramsHash) return { kind: "params-changed", pending };
      const inserted = await client.query(
        `INSERT INTO approval_votes (execution_id, name, position, approver_key_id, approver_name, approver_role,
                                     approver_subject, decision, params_hash, reason)
         VALUES ($1, $2, $3, $4, $5, $6::"ApiRole", $7, $8::"ApprovalDecision", $9, $10)
         ON CONFLICT DO NOTHING RETURNING id`,
        [
          request.executionId,
          request.name,
          pending.position,
          request.approver.keyId,
          request.approver.name,
          request.approver.role,
          request.approver.subject,
          request.decision,
          request.paramsHash,
          request.reason,
        ],
      );
      if (inserted.rowCount !== 1) {
        const previous = await client.query(
          `SELECT decision::text AS decision, created_at FROM approval_votes
           WHERE execution_id = $1 AND name = $2 AND position = $3 AND approver_subject = $4`,
          [request.executionId, request.name, pending.position, request.approver.subject],
        );
        const p = previous.rows[0];
        return { kind: "duplicate", previous: { decision: p?.decision, at: p?.created_at?.toISOString() } };
      }
      const votes = await this.votesAt(client, request.executionId, request.name, pending.position);
      const approving = votes.filter(
        (v) => v.decision === "approve" && v.paramsHash === pending.details.paramsHash,
      );
      const rejecting = votes.find(
        (v) => v.decision === "reject" && v.paramsHash === pending.details.paramsHash,
      );
      let decision: ApprovalDecisionPayload | null = null;
      if (rejecting) {
        decision = {
          approved: false,
          paramsHash: pending.details.paramsHash,
          rejectedBy: rejecting.approver,
          reason: rejecting.reason,
        };
      } else if (approving.length >= pending.details.quorum) {
        decision = {
          approved: true,
          paramsHash: pending.details.paramsHash,
          approvers: approving.map((v) => v.approver),
        };
      }
      if (decision) {
        await client.query(
          `INSERT INTO signals (execution_id, name, payload, idempotency_key) VALUES ($1, $2, $3::jsonb, $4)`,
          [request.executionId, approvalSignalName(request.name), json(decision), decisionKey],
        );
      }
      return {
        kind: "recorded",
        workflow: execution.workflow,
        pending,
        approvals: approving.length,
        votes,
        decision,
      };
    });
  }

  /** Every vote cast on an execution of `orgId`, oldest first; null when the organisation has no such execution. */
  async list(orgId: string, executionId: string): Promise<VoteRecord[] | null> {
    // A read without locks: Prisma Client, typed from the schema (the vote itself stays one locked transaction).
    const db = prismaFor(this.pool);
    if ((await db.execution.count({ where: { id: executionId, orgId } })) !== 1) return null;
    const votes = await db.approvalVote.findMany({ where: { executionId }, orderBy: { id: "asc" } });
    return votes.map((v) => ({
      name: v.name,
      position: v.position,
      approver: {
        keyId: v.approverKeyId,
        name: v.approverName,
        role: fromStoredRole(v.approverRole),
        at: v.createdAt.toISOString(),
      },
      subject: v.approverSubject,
      decision: v.decision,
      paramsHash: v.paramsHash,
      reason: v.reason,
    }));
  }

  private async votesAt(client: PoolClient, executionId: string, name: string, position: number) {
    const { rows } = await client.query(
      `SELECT name, position, approver_key_id, approver_name, approver_role::text AS approver_role,
              approver_subject, decision::text AS decision, params_hash, reason, created_at
       FROM approval_votes WHERE execution_id = $1 AND name = $2 AND position = $3 ORDER BY id`,
      [executionId, name, position],
    );
    return rows.map(toVote);
  }

  private transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
function toVote(r: any): VoteRecord {
  return {
    name: r.name,
    position: r.position,
    approver: {
      keyId: r.approver_key_id,
      name: r.approver_name,
      role: r.approver_role,
      at: r.created_at.toISOString(),
    },
    subject: r.approver_subject,
    decision: r.decision,
    paramsHash: r.params_hash,
    reason: r.reason,
  };
}

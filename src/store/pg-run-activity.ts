import type { Pool } from "pg";
import type { SignalSender } from "../engine/execution-client.js";
import { type ExecutionAuditRecord, readExecutionAudit } from "./pg-evidence.js";
import { iso } from "./pg-execution-reads.js";

/** A signal delivered to an execution, with the key that sent it when that was recorded. */
export interface DeliveredSignal {
  name: string;
  payload: unknown;
  sentBy: SignalSender | null;
  createdAt: string;
  consumedPosition: number | null;
  consumedAt: string | null;
}

/**
 * What happened to one execution besides its journal, for its activity resource (docs/console.md,
 * "A run seen whole"): the signals delivered to it and the audit rows naming it. Scoped to the
 * organisation through the execution row; null when the organisation has no such execution.
 */
export class PgRunActivity {
  constructor(private readonly pool: Pool) {}

  async signals(orgId: string, executionId: string): Promise<DeliveredSignal[]> {
    const { rows } = await this.pool.query(
      `SELECT s.name, s.payload, s.sent_by, s.created_at,
              s.consumed_position, s.consumed_at
       FROM signals s JOIN executions e ON e.id = s.execution_id AND e.org_id = $2
       WHERE s.execution_id = $1 ORDER BY s.id`,
      [executionId, orgId],
    );
    return rows.map((s) => ({
      name: s.name,
      payload: s.payload,
      sentBy: s.sent_by ?? null,
      createdAt: iso(s.created_at) as string,
      consumedPosition: s.consumed_position,
      consumedAt: iso(s.consumed_at),
    }));
  }

  audit(orgId: string, executionId: string): Promise<ExecutionAuditRecord[]> {
    return readExecutionAudit(this.pool, orgId, executionId);
  }
}

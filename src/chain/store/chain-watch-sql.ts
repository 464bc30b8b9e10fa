import type { Pool } from "pg";

/** One execution parked on a chain condition, as the confirmation watcher reads it. */
export interface ChainWait {
  executionId: string;
  kind: "confirmation" | "funding";
  details: Record<string, unknown>;
}

/**
 * Executions of `workflow` waiting on a `confirmation` or `funding` condition of chain `chainId`,
 * oldest first (the projection's `waiting_for` list: docs/engine.md), leaving out a wait whose
 * signal is already stored: it needs nothing more from the watcher (its execution consumes the
 * signal when its turn comes), and listing it would keep newer waits out of a full batch while
 * the runner is busy.
 */
export const CHAIN_WAITS_SQL = `
  SELECT e.id, w->>'kind' AS kind, w->'details' AS details
  FROM executions e, jsonb_array_elements(e.waiting_for) w
  WHERE e.status = 'waiting' AND e.workflow = $1
    AND w->>'kind' IN ('confirmation', 'funding')
    AND (w->'details'->>'chainId')::bigint = $2
    AND NOT EXISTS (
      SELECT 1 FROM signals s
      WHERE s.execution_id = e.id AND s.name = w->'details'->>'signal' AND s.consumed_at IS NULL)
  ORDER BY e.updated_at
  LIMIT $3`;

/** The waits {@link CHAIN_WAITS_SQL} lists, at most `limit`. */
export async function listChainWaits(
  pool: Pool,
  workflow: string,
  chainId: number,
  limit: number,
): Promise<ChainWait[]> {
  const { rows } = await pool.query<{
    id: string;
    kind: ChainWait["kind"];
    details: Record<string, unknown>;
  }>(CHAIN_WAITS_SQL, [workflow, chainId, limit]);
  return rows.map((r) => ({ executionId: r.id, kind: r.kind, details: r.details ?? {} }));
}

/** The organisation an execution belongs to (set at start from the caller's key), or null. */
export async function executionOrg(pool: Pool, executionId: string): Promise<string | null> {
  const { rows } = await pool.query<{ org_id: string }>("SELECT org_id FROM executions WHERE id = $1", [
    executionId,
  ]);
  return rows[0]?.org_id ?? null;
}

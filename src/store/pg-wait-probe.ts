import type { Pool } from "pg";

/**
 * True for a waiting execution `x` whose wait can be satisfied now, so a turn would move it: a
 * cancellation was requested, an unconsumed signal matches a signal wait (an approval's decision
 * is its reserved signal `$approval:<name>`; a signal wait shown as another kind names its signal
 * in `details.signal`: a nonce grant, a nonce window, a confirmation), an activity position has its outcome, a child is
 * terminal, a run parked on a pause was unpaused, or a run parked on anything else was paused. Every probe is an index lookup: signals (execution_id, name, id), the journal's
 * primary key, the executions primary key. Timers need no probe: their job is delayed to them.
 */
const SATISFIABLE = `
  x.status = 'waiting'
  -- Keyed executions not yet admitted are the keyed gate's (src/keyed), never woken here.
  AND NOT (x.turn = 0 AND x.key IS NOT NULL) AND (
    x.cancel_requested_at IS NOT NULL
    OR EXISTS (
      SELECT 1 FROM jsonb_array_elements(COALESCE(x.waiting_for, '[]'::jsonb)) w
      WHERE (w->>'kind' IN ('signal', 'approval') AND EXISTS (
               SELECT 1 FROM signals s
               WHERE s.execution_id = x.id AND s.consumed_position IS NULL
                 AND s.name = CASE WHEN w->>'kind' = 'approval' THEN '$approval:' || (w->>'name') ELSE w->>'name' END))
         OR (w->'details'->>'signal' IS NOT NULL AND EXISTS (
               SELECT 1 FROM signals s
               WHERE s.execution_id = x.id AND s.consumed_position IS NULL
                 AND s.name = w->'details'->>'signal'))
         OR (w->>'kind' = 'activity' AND EXISTS (
               SELECT 1 FROM journal_entries j
               WHERE j.execution_id = x.id AND j.position = (w->>'position')::int AND j.state <> 'pending'))
         OR (w->>'kind' = 'pause' AND x.paused IS NULL)
         -- Paused while parked on something else: a pause that met the parking turn's job still
         -- active was not woken, and a turn must park the run on its pause to show it.
         OR (w->>'kind' <> 'pause' AND x.paused IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(x.waiting_for) p WHERE p->>'kind' = 'pause'))
         OR (w->>'kind' = 'child' AND EXISTS (
               SELECT 1 FROM executions c
               WHERE c.id = (w->'details'->>'childId')::uuid AND c.status IN ('completed', 'failed')))
    )
  )`;

export interface SatisfiedWait {
  id: string;
  workflow: string;
}

/**
 * Reads, from PostgreSQL alone, which waiting executions a wake should have woken. The
 * runner asks it for one execution right after parking (a wake-up that found the job still
 * active), and the sweep asks it for all of them (a wake-up lost between commit and wake).
 */
export class PgWaitProbe {
  constructor(private readonly pool: Pool) {}

  /** True when the execution waits and its wait can be satisfied now. */
  async satisfiable(executionId: string): Promise<boolean> {
    const { rows } = await this.pool.query(`SELECT 1 FROM executions x WHERE x.id = $1 AND ${SATISFIABLE}`, [
      executionId,
    ]);
    return rows.length > 0;
  }

  /**
   * Waiting executions whose wait can be satisfied, in id order after `after`, at most `limit`.
   * One query per page, driven by the (status, updated_at) index on executions.
   */
  async satisfiedWaits(after: string, limit: number): Promise<SatisfiedWait[]> {
    const { rows } = await this.pool.query<SatisfiedWait>(
      `SELECT x.id, x.workflow FROM executions x
       WHERE x.id > $1 AND ${SATISFIABLE}
       ORDER BY x.id LIMIT $2`,
      [after, limit],
    );
    return rows;
  }
}

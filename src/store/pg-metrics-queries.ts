import type { Pool } from "pg";

/**
 * Counts of non-terminal executions by workflow and state for the runner's metrics: `held`
 * (suspended for non-determinism or an unknown workflow), `suspended`, `waiting`, `running`.
 * One grouped scan per scrape; the statement timeout keeps a slow database from stalling it.
 */
export async function countLiveExecutions(
  pool: Pool,
): Promise<{ workflow: string; state: string; count: number }[]> {
  const client = await pool.connect();
  try {
    await client.query("SET statement_timeout = 2000");
    const { rows } = await client.query<{ workflow: string; state: string; count: string }>(
      `SELECT workflow,
              CASE WHEN status = 'suspended' AND hold IS NOT NULL THEN 'held' ELSE status::text END AS state,
              count(*) AS count
         FROM executions
        WHERE status IN ('running', 'waiting', 'suspended')
        GROUP BY 1, 2`,
    );
    return rows.map((r) => ({ workflow: r.workflow, state: r.state, count: Number(r.count) }));
  } finally {
    await client.query("RESET statement_timeout").catch(() => undefined);
    client.release();
  }
}

import type { Pool, PoolClient } from "pg";

/**
 * Counts of non-terminal executions by workflow and state for the runner's metrics: `held`
 * (suspended for non-determinism or an unknown workflow), `suspended`, `waiting`, `running`.
 * One grouped scan per scrape; the statement timeout keeps a slow database from stalling it.
 */
export function countLiveExecutions(
  pool: Pool,
): Promise<{ workflow: string; state: string; count: number }[]> {
  return withScrapeTimeout(pool, async (client) => {
    const { rows } = await client.query<{ workflow: string; state: string; count: string }>(
      `SELECT workflow,
              CASE WHEN status = 'suspended' AND hold IS NOT NULL THEN 'held' ELSE status::text END AS state,
              count(*) AS count
         FROM executions
        WHERE status IN ('running', 'waiting', 'suspended')
        GROUP BY 1, 2`,
    );
    return rows.map((r) => ({ workflow: r.workflow, state: r.state, count: Number(r.count) }));
  });
}

/**
 * Webhook deliveries not final yet (status `pending`: due, waiting for a retry, or in flight), all
 * organisations together: the outbox's backlog. Reads the `(status, next_attempt_at)` index.
 */
export function countPendingWebhookDeliveries(pool: Pool): Promise<number> {
  return withScrapeTimeout(pool, async (client) => {
    const { rows } = await client.query<{ count: string }>(
      "SELECT count(*) AS count FROM webhook_deliveries WHERE status = 'pending'",
    );
    return Number(rows[0]?.count ?? 0);
  });
}

/**
 * Executions past their own wake time by more than `graceMs` and still waiting or suspended: a timer,
 * deadline or retry that nobody fired (runners down, a lost wake-up the sweep has not repaired yet).
 */
export function countOverdueTimers(pool: Pool, graceMs: number): Promise<number> {
  return withScrapeTimeout(pool, async (client) => {
    const { rows } = await client.query<{ count: string }>(
      `SELECT count(*) AS count FROM executions
        WHERE status IN ('waiting', 'suspended') AND wake_at < now() - $1 * interval '1 millisecond'`,
      [graceMs],
    );
    return Number(rows[0]?.count ?? 0);
  });
}

/**
 * Runs a scrape's read under a 2 s statement timeout, so a slow database cannot stall `/metrics`.
 * A checked-out client has no pool listener: without one of its own, a connection that dies
 * during the read would emit an unhandled 'error' and crash the process (the read rejects too,
 * and that rejection is what the scrape reports). A connection whose timeout cannot be reset is
 * destroyed rather than returned to the pool with it still set.
 */
async function withScrapeTimeout<T>(pool: Pool, read: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const ignore = () => undefined;
  client.on("error", ignore);
  let broken = false;
  try {
    await client.query("SET statement_timeout = 2000");
    return await read(client);
  } finally {
    broken = await client.query("RESET statement_timeout").then(
      () => false,
      () => true,
    );
    // A destroyed connection keeps the listener for its last events.
    if (!broken) client.off("error", ignore);
    client.release(broken);
  }
}

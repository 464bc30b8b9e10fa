import type { Pool, PoolClient } from "pg";

/**
 * Runs `work` in one transaction on a pooled connection: COMMIT when it resolves, ROLLBACK when
 * it throws. The one place Tenor opens a transaction, because two details are easy to miss:
 * a checked-out client has no pool listener, so a connection that dies mid-transaction would emit
 * an unhandled 'error' and crash the process (the failing query rejects too, and that rejection is
 * what the caller acts on); and a connection that cannot even roll back is dead, so it is
 * destroyed rather than returned to the pool.
 */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const ignore = () => undefined;
  client.on("error", ignore);
  let broken = false;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    broken = await client.query("ROLLBACK").then(
      () => false,
      () => true,
    );
    throw error;
  } finally {
    // A destroyed connection keeps the listener for its last events.
    if (!broken) client.off("error", ignore);
    client.release(broken);
  }
}

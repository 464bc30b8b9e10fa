import type { PoolClient, QueryResult } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeNonceWindowWakes } from "../../src/chain/store/pg-nonce-window.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * The wake of one sender's nonce window (the statement that picks its waiters and stores their
 * wake signals) reads the partial expression index `executions_nonce_window_waiters_idx`, not
 * every waiting run, and picks each waiter once: not one already woken, not one a concurrent
 * release is waking. The plan is PostgreSQL's own, for the wake's own statement, over 100 000
 * runs: 60 000 finished, 20 000 waiting on a timer and 20 000 on the nonce windows of 100 senders
 * (200 each); sender 0 has two waiters more, one of them waiting on a timer as well.
 */

const RUNS = 100_000;
const SENDERS = 100;
let db: TestDatabase;

const windowOf = (sender: number) => `31337:0x${sender.toString(16).padStart(40, "0")}`;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input, waiting_for, created_at, updated_at)
     SELECT gen_random_uuid(), 'chain.transaction', 4, 'acme',
            (CASE WHEN n % 5 < 3 THEN 'completed' ELSE 'waiting' END)::"ExecutionStatus", '{}'::jsonb,
            CASE WHEN n % 5 < 3 THEN NULL
                 WHEN n % 5 = 3 THEN jsonb_build_array(jsonb_build_object('kind', 'timer', 'name', 'sleep'))
                 ELSE jsonb_build_array(jsonb_build_object(
                   'kind', 'nonce',
                   'name', '31337:0x' || lpad(to_hex((n / 5) % $2::int), 40, '0'),
                   'details', jsonb_build_object('signal', 'nonce-window:' || n)))
            END,
            now(), now() - make_interval(secs => n)
       FROM generate_series(1, $1::int) AS n`,
    [RUNS, SENDERS],
  );
  // Two of sender 0's waiters are the oldest of all; one also waits on a timer, listed first.
  await db.pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input, waiting_for, created_at, updated_at)
     VALUES (gen_random_uuid(), 'chain.transaction', 4, 'acme', 'waiting', '{}'::jsonb,
             jsonb_build_array(jsonb_build_object('kind', 'timer', 'name', 'deadline'),
                               jsonb_build_object('kind', 'nonce', 'name', $1::text,
                                                  'details', jsonb_build_object('signal', 'oldest-1'))),
             now(), now() - interval '3 days'),
            (gen_random_uuid(), 'chain.transaction', 4, 'acme', 'waiting', '{}'::jsonb,
             jsonb_build_array(jsonb_build_object('kind', 'nonce', 'name', $1::text,
                                                  'details', jsonb_build_object('signal', 'oldest-2'))),
             now(), now() - interval '2 days')`,
    [windowOf(0)],
  );
  await db.pool.query("ANALYZE executions");
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

/**
 * Runs the wake statement for `key` inside a transaction that is rolled back afterwards (its
 * stored wakes never outlive the call), with PostgreSQL's plan for that same statement.
 */
async function wakesAndPlan(key: string, limit: number, before?: (client: PoolClient) => Promise<void>) {
  const client = await db.pool.connect();
  const sent: { text: string; values: unknown[] }[] = [];
  const recording = {
    query: async (text: string, values: unknown[]): Promise<QueryResult> => {
      sent.push({ text, values });
      return client.query(text, values);
    },
  } as unknown as PoolClient;
  try {
    await client.query("BEGIN");
    await before?.(client);
    const waiters = await storeNonceWindowWakes(recording, key, limit);
    const [statement] = sent;
    if (!statement) throw new Error("the wake sent no statement");
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
    const { rows: stored } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM signals WHERE idempotency_key LIKE 'nonce-window:%'",
    );
    return { plan: JSON.stringify(rows[0]["QUERY PLAN"]), waiters, stored: stored[0]?.n };
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

describe("the nonce window's wakes", () => {
  it("wake one sender's waiters, oldest first, read from the nonce window index, and store one signal each", async () => {
    const { plan, waiters, stored } = await wakesAndPlan(windowOf(0), 4);
    expect(plan).toContain("executions_nonce_window_waiters_idx");
    expect(plan).not.toContain("executions_status_updated_at_idx");
    // Sender 0's generated waiters are the runs n = 4 (mod 5) with floor(n / 5) = 0 (mod 100);
    // the larger n, the older.
    const oldest = Math.floor((RUNS - 4) / (5 * SENDERS)) * 5 * SENDERS + 4;
    expect(waiters.map((w) => w.signal)).toEqual([
      "oldest-1",
      "oldest-2",
      `nonce-window:${oldest}`,
      `nonce-window:${oldest - 5 * SENDERS}`,
    ]);
    expect(stored).toBe(4);
    // The wake that openNonceWindow sends names the row stored here: a repeat of its key, not a
    // second signal.
    for (const w of waiters) expect(w.idempotencyKey).toBe(`nonce-window:${w.executionId}:${w.signal}`);
  });

  it("skip a waiter whose wake is stored but not yet taken, so the next release wakes the next run", async () => {
    const { waiters } = await wakesAndPlan(windowOf(0), 1, async (client) => {
      // The wake of an earlier release: the run stays `waiting` in the projection until its turn.
      const [first] = await storeNonceWindowWakes(client, windowOf(0), 1);
      expect(first?.signal).toBe("oldest-1");
    });
    expect(waiters.map((w) => w.signal)).toEqual(["oldest-2"]);
  });

  it("skip a waiter a concurrent release is waking, instead of waiting for it or waking it twice", async () => {
    const other = await db.pool.connect();
    try {
      // A release in flight: its statement holds the oldest waiter's row until it commits.
      await other.query("BEGIN");
      const [held] = await storeNonceWindowWakes(other, windowOf(0), 1);
      expect(held?.signal).toBe("oldest-1");
      const concurrent = storeNonceWindowWakes(db.pool, windowOf(0), 1);
      const outcome = await Promise.race([
        concurrent,
        new Promise<"blocked">((resolve) => setTimeout(() => resolve("blocked"), 15_000)),
      ]);
      expect(outcome === "blocked" ? outcome : outcome.map((w) => w.signal)).toEqual(["oldest-2"]);
      // Committed by the concurrent release: undo it so the other tests see no wakes.
      await db.pool.query("DELETE FROM signals WHERE idempotency_key LIKE 'nonce-window:%'");
    } finally {
      await other.query("ROLLBACK");
      other.release();
    }
  });

  it("read the index too for a sender no run waits on, and find none", async () => {
    const { plan, waiters } = await wakesAndPlan("31337:0x00000000000000000000000000000000000000ff", 16);
    expect(plan).toContain("executions_nonce_window_waiters_idx");
    expect(waiters).toEqual([]);
  });
});

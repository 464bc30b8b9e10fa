import type { Pool, QueryResult } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExecutionListFilter, PgExecutionReads } from "../../src/store/pg-execution-reads.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";

/**
 * The list's indexes (docs/console.md, "Lists"): a page of an organisation's top-level runs reads
 * the partial index of runs without a parent, not every child the organisation's runs started.
 * The plan is PostgreSQL's own, for the list's own statement, over a table shaped as the platform's
 * are: a few top-level runs, each with many child transactions.
 */

const PARENTS = 40;
const CHILDREN_PER_PARENT = 500;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input, created_at)
     SELECT gen_random_uuid(), 'corporate-action.distribute', 1, org, 'completed', '{}'::jsonb,
            now() - make_interval(mins => n)
       FROM generate_series(1, $1::int) AS n, (VALUES ('acme'), ('globex')) AS o(org)`,
    [PARENTS],
  );
  await db.pool.query(
    `INSERT INTO executions (id, workflow, workflow_version, org_id, status, input, parent_id, created_at)
     SELECT gen_random_uuid(), 'chain.transaction', 4, p.org_id, 'completed', '{}'::jsonb, p.id,
            p.created_at + make_interval(secs => n)
       FROM executions p, generate_series(1, $1::int) AS n
      WHERE p.parent_id IS NULL`,
    [CHILDREN_PER_PARENT],
  );
  await db.pool.query("ANALYZE executions");
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

/** The plan PostgreSQL chooses for the statement `list` sends, with its values. */
async function planOfList(filter: ExecutionListFilter): Promise<{ plan: string; rows: number }> {
  const sent: { text: string; values: unknown[] }[] = [];
  const recording = {
    query: async (text: string, values: unknown[]): Promise<QueryResult> => {
      sent.push({ text, values });
      return db.pool.query(text, values);
    },
  } as unknown as Pool;
  const rows = await new PgExecutionReads(recording).list(filter);
  const [statement] = sent;
  if (!statement) throw new Error("list sent no statement");
  const { rows: explained } = await db.pool.query(
    `EXPLAIN (FORMAT JSON) ${statement.text}`,
    statement.values,
  );
  return { plan: JSON.stringify(explained[0]["QUERY PLAN"]), rows: rows.length };
}

describe("the execution list's indexes", () => {
  it("reads a page of top-level runs from the partial index of runs without a parent", async () => {
    const { plan, rows } = await planOfList({ orgId: "acme", topLevel: true, limit: 51 });
    expect(rows).toBe(PARENTS);
    expect(plan).toContain("executions_org_id_top_level_created_at_id_idx");
  });

  it("keeps reading every run of the organisation, children included, from the organisation's index", async () => {
    const { plan, rows } = await planOfList({ orgId: "acme", limit: 51 });
    expect(rows).toBe(51);
    expect(plan).toContain("executions_org_id_created_at_id_idx");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";
import { killAllProcesses } from "../support/processes.js";
import { directTurnRunner } from "../support/turn-runner.js";
import { compatIssue } from "./fixtures/compat-workflows.js";
import { runTenor } from "./support/run-cli.js";

/**
 * `tenor compat --against <module>` (docs/console.md, "Compatibility report"): unfinished
 * executions' journals, written by the deployed build's code, replayed against another build's
 * workflows without side effects, as the real CLI process.
 */
let db: TestDatabase;
let store: PgExecutionStore;
const ids: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PgExecutionStore(db.pool);
  const runner = directTurnRunner(store, [compatIssue]);
  // Two runs parked past the renamed step, one parked before any step, one finished.
  for (const [label, gateFirst] of [
    ["pastA", false],
    ["pastB", false],
    ["gated", true],
    ["finished", false],
  ] as const) {
    const { summary } = await store.createExecution(
      newExecution({ workflow: compatIssue.name, orgId: "acme", input: { gateFirst } }),
    );
    ids[label] = summary.id;
    expect((await runner.run(summary.id)).kind).toBe("parked");
  }
  await db.pool.query("UPDATE executions SET status = 'completed' WHERE id = $1", [ids.finished]);
}, 60_000);

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

describe("tenor compat", () => {
  it("names every unfinished run a renamed step would break, with position, recorded and new call, and exits 1", async () => {
    const run = await runTenor(["compat", "--against", "test/cli/fixtures/compat-renamed.ts"], {
      DATABASE_URL: db.url,
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout.split("\n")[0]).toMatch(
      /^EXECUTION\s+ORG\s+WORKFLOW\s+STATUS\s+PROBLEM\s+POSITION\s+RECORDED\s+NEW CALL/,
    );
    for (const id of [ids.pastA, ids.pastB]) {
      expect(run.stdout).toMatch(
        new RegExp(
          `${id}\\s+acme\\s+compat\\.issue@1\\s+waiting\\s+non-determinism\\s+1\\s+step "token\\.deploy"\\s+step "token\\.mint"`,
        ),
      );
    }
    // Parked before the renamed step: its journal replays; the finished run is not looked at.
    expect(run.stdout).not.toContain(ids.gated);
    expect(run.stdout).not.toContain(ids.finished);
    expect(run.stdout).toContain("3 unfinished executions replayed, 2 would break");

    const json = await runTenor(["compat", "--against", "test/cli/fixtures/compat-renamed.ts", "--json"], {
      DATABASE_URL: db.url,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ checked: 3, breaking: 2 });
    // Nothing was written: the journals and statuses are as the deployed build left them.
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n, max(turn) AS turns FROM executions WHERE status = 'waiting'",
    );
    expect(rows[0]).toEqual({ n: 3, turns: 1 });
  }, 60_000);

  it("passes with exit 0 against the build the runs were written by, and reports a missing version", async () => {
    const same = await runTenor(["compat", "--against", "test/cli/fixtures/compat-workflows.ts"], {
      DATABASE_URL: db.url,
    });
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe("(none)\n3 unfinished executions replayed, 0 would break\n");

    await store.createExecution(
      newExecution({ workflow: compatIssue.name, workflowVersion: 7, input: { gateFirst: true } }),
    );
    const missing = await runTenor(["compat", "--against", "test/cli/fixtures/compat-workflows.ts"], {
      DATABASE_URL: db.url,
    });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/compat\.issue@7\s+running\s+version missing \(build has 1\)/);

    const wrong = await runTenor(["compat", "--against", "test/cli/fixtures/nowhere.ts"], {
      DATABASE_URL: db.url,
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--against "test/cli/fixtures/nowhere.ts" does not exist');
  }, 60_000);
});

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { freePort, spawnProcess } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually, type RoleProcess, spawnRole } from "../support/role-process.js";
import { labelViolations, sampleValue } from "./metric-labels.js";

/**
 * Every role serves /metrics on its health port. After a real run (the quick-start demo through
 * the HTTP API: start, approval, completion) the scrape of each role carries the metrics,
 * and every label value passes the allow-list (metric-labels.ts): no ids, keys, org ids or hashes.
 */
let db: TestDatabase;
let env: Record<string, string>;
const prefix = testRedisPrefix(import.meta.url);
const roles: RoleProcess[] = [];
const port = (role: "api" | "runner" | "indexer") =>
  env[
    {
      api: "TENOR_API_HEALTH_PORT",
      runner: "TENOR_RUNNER_HEALTH_PORT",
      indexer: "TENOR_INDEXER_HEALTH_PORT",
    }[role]
  ];
const scrape = async (role: "api" | "runner" | "indexer") => {
  const response = await fetch(`http://127.0.0.1:${port(role)}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return response.text();
};

beforeAll(async () => {
  db = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), "tenor-metrics-"));
  // A fast sweep, so schedule runs show up within the test.
  writeFileSync(join(dir, "tenor.yaml"), "durable:\n  sweep: { intervalMs: 200 }\n");
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: join(dir, "tenor.yaml"),
    TENOR_API_PORT: String(await freePort()),
    TENOR_API_HEALTH_PORT: String(await freePort()),
    TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
    TENOR_INDEXER_HEALTH_PORT: String(await freePort()),
  };
  for (const role of ["api", "runner", "indexer"] as const) {
    roles.push(spawnRole({ ...env, DAPI_ROLE: role }));
  }
  for (const role of ["api", "runner", "indexer"] as const) {
    await eventually(
      `${role} ready`,
      async () => (await fetch(`http://127.0.0.1:${port(role)}/readyz`)).ok,
      60_000,
    );
  }
});

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

describe("/metrics", () => {
  it("reports a real run on every role with bounded labels only", async () => {
    const demo = spawnProcess(
      "demo-approval",
      ...entryCommand("scripts/demo-approval.ts", ["--symbol", "METR"]),
      { env, settleOn: "close" },
    );
    const { code } = await demo.exit;
    const out = demo.output();
    expect(code, out).toBe(0);
    const executionId = /execution ([0-9a-f-]{36})/.exec(out)?.[1];
    expect(executionId).toBeDefined();
    // A request whose path carries the execution id: its route label must be the template.
    await fetch(`http://127.0.0.1:${port("api")}/v1/executions/${executionId}`);

    const workflow = { workflow: "demo.asset-issue" };
    await eventually("the runner's sweep ran", async () => {
      const text = await scrape("runner");
      return (sampleValue(text, "tenor_schedule_runs_total", { schedule: "execution-sweep" }) ?? 0) > 0;
    });
    const api = await scrape("api");
    const runner = await scrape("runner");
    const indexer = await scrape("indexer");

    expect(sampleValue(api, "tenor_executions_started_total", workflow)).toBe(1);
    expect(sampleValue(api, "tenor_api_requests_total", { method: "POST", status: "202" })).toBeGreaterThan(
      0,
    );
    expect(api).toContain('route="/v1/executions/:id"');
    expect(sampleValue(runner, "tenor_executions_finished_total", { ...workflow, status: "completed" })).toBe(
      1,
    );
    expect(
      sampleValue(runner, "tenor_turn_duration_seconds_count", { ...workflow, outcome: "completed" }),
    ).toBe(1);
    expect(
      sampleValue(runner, "tenor_turn_duration_seconds_count", { ...workflow, outcome: "parked" }),
    ).toBeGreaterThan(0);
    expect(sampleValue(runner, "tenor_step_duration_seconds_count", workflow)).toBeGreaterThan(0);
    expect(sampleValue(runner, "tenor_journal_batch_rows_count")).toBeGreaterThan(0);
    expect(sampleValue(runner, "tenor_queue_depth", { queue: "executions", state: "waiting" })).toBe(0);
    expect(sampleValue(runner, "tenor_keyed_lane_depth", { space: "entities", state: "pending" })).toBe(0);
    expect(sampleValue(runner, "tenor_wakeup_repairs_total")).toBeDefined();
    expect(sampleValue(runner, "tenor_webhook_deliveries_pending")).toBe(0);
    expect(sampleValue(runner, "tenor_shards_owned", { domain: "runner" })).toBe(64);
    expect(sampleValue(indexer, "tenor_shards_owned", { domain: "indexer" })).toBe(64);

    // First start on an empty Redis prefix: the keyed space is initialised, not reported lost.
    expect(roles[1]!.output()).toContain("keyed space initialised in Redis");
    expect(roles[1]!.output()).not.toContain("Redis lost it");

    for (const [role, text] of [
      ["api", api],
      ["runner", runner],
      ["indexer", indexer],
    ] as const) {
      expect(labelViolations(text), role).toEqual([]);
      expect(text, role).not.toContain(executionId);
      expect(text, role).toContain(`role="${role}"`);
    }
  });
});

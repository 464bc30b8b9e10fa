import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { application } from "../../workers/application.js";
import { type HttpClient, httpClient, issueTestKeys } from "../support/api-client.js";
import { writeTestConfig } from "../support/config-file.js";
import { freePort } from "../support/processes.js";
import { eventually, type RoleProcess, roleReady, spawnRole } from "../support/role-process.js";
import { createTestStores, type TestStores } from "../support/test-stores.js";
import { runTenor } from "./support/run-cli.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/**
 * Who is alive, seen from outside: real api, runner and indexer processes; runners killed with -9
 * and stopped with SIGSTOP; `tenor runners`, `tenor doctor`, the platform status and the api's
 * live-replica gauge must each tell.
 */
const SHARDS = 8;
let stores: TestStores;
let env: Record<string, string>;
let call: HttpClient<"operator">;
let apiHealth: string;
const roles: Record<string, RoleProcess> = {};

beforeAll(async () => {
  stores = await createTestStores(import.meta.url);
  const config = writeTestConfig("runners", {
    durable: {
      runnerConcurrency: 6,
      lock: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
      // A dead replica drops out of the live count within about a second and a half.
      sharding: { shardCount: SHARDS, refreshIntervalMs: 250, livenessWindowMs: 1500 },
    },
    // Four roles start at once on a small machine and the CLI calls as soon as they are ready: a
    // 503 for event-loop lag would fail the listing this test is about (as in the console tests).
    api: { rateLimit: { max: 1_000_000, windowSeconds: 60 }, admission: { maxEventLoopLagMs: 0 } },
  });
  env = { ...stores.env, TENOR_CONFIG: config.file, TENOR_LOG_LEVEL: "warn" };
  const [apiPort, apiHealthPort, runnerA, runnerB, indexer] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  apiHealth = `http://127.0.0.1:${apiHealthPort}`;
  roles.api = spawnRole({
    ...env,
    DAPI_ROLE: "api",
    TENOR_API_PORT: String(apiPort),
    TENOR_API_HEALTH_PORT: String(apiHealthPort),
  });
  roles.a = spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(runnerA) });
  roles.b = spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(runnerB) });
  roles.indexer = spawnRole({ ...env, DAPI_ROLE: "indexer", TENOR_INDEXER_HEALTH_PORT: String(indexer) });
  const base = `http://127.0.0.1:${apiPort}`;
  await roleReady("api ready", roles.api, base);
  await roleReady("runner a ready", roles.a, `http://127.0.0.1:${runnerA}`);
  await roleReady("runner b ready", roles.b, `http://127.0.0.1:${runnerB}`);
  await roleReady("indexer ready", roles.indexer, `http://127.0.0.1:${indexer}`);
  const { keys } = await issueTestKeys(new PgApiKeys(stores.db.pool), {
    operator: { org: "demo", role: "operator" },
  });
  call = httpClient(base, keys);
  env = { ...env, TENOR_API_URL: base, TENOR_API_KEY: keys.operator };
}, 120_000);

afterAll(async () => {
  for (const role of Object.values(roles)) {
    role.kill("SIGCONT");
    role.kill("SIGKILL");
  }
  await Promise.all(Object.values(roles).map((r) => r.exited));
  await stores?.drop();
});

async function replicas(): Promise<Json> {
  const status = await call("operator", "GET", "/v1/platform/status");
  expect(status.status).toBe(200);
  return status.body.replicas;
}

/** Waits until the platform status satisfies `predicate`; fails naming what it last saw. */
async function until(what: string, predicate: (r: Json) => boolean): Promise<Json> {
  let last: Json = null;
  try {
    await eventually(
      what,
      async () => {
        last = await replicas();
        return predicate(last);
      },
      30_000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${JSON.stringify(last)}`);
  }
  return last;
}

const pidOf = (role: RoleProcess) => role.child.pid as number;
const runnerRow = (r: Json, role: RoleProcess) =>
  r.instances.find((i: Json) => i.role === "runner" && i.pid === pidOf(role));

async function liveGauge(): Promise<Record<string, number>> {
  const text = await (await fetch(`${apiHealth}/metrics`)).text();
  const values: Record<string, number> = {};
  for (const m of text.matchAll(/^tenor_replicas_live\{domain="(\w+)",role="api"\} (\d+)$/gm))
    values[m[1] as string] = Number(m[2]);
  return values;
}

describe("who is alive", () => {
  it("lists live runners and indexers, and tells when runners die or stop", async () => {
    const all = await until(
      "two live runners and one indexer owning every shard",
      (r) =>
        r.live.runner === 2 && r.live.indexer === 1 && r.shards.every((s: Json) => s.unowned.length === 0),
    );
    const a = runnerRow(all, roles.a as RoleProcess);
    expect(a).toMatchObject({ live: true, busy: 0, capacity: 6 });
    // What the release registers: the runner serves exactly its workflows' versions.
    expect([...a.workflows].sort()).toEqual(
      application.workflows.map((w) => `${w.name}@${w.version}`).sort(),
    );
    expect(a.heartbeatAgeMs).toBeLessThan(1500);
    const owned = all.instances.filter((i: Json) => i.role === "runner").flatMap((i: Json) => i.shards);
    expect(owned.sort((x: number, y: number) => x - y)).toEqual([...Array(SHARDS).keys()]);
    expect(all.instances.find((i: Json) => i.role === "indexer")).toMatchObject({
      live: true,
      workflows: [],
      busy: null,
      capacity: null,
    });
    expect(await liveGauge()).toEqual({ runner: 2, indexer: 1 });

    const listed = await runTenor(["runners"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("live: 2 runner(s), 1 indexer(s)");
    expect(listed.stdout).toContain(`runner shards: all ${SHARDS} owned`);
    const healthy = await runTenor(["doctor", "--json"], env);
    expect(healthy.code, healthy.stdout).toBe(0);
    const checks = JSON.parse(healthy.stdout).checks as Json[];
    expect(checks.find((c) => c.name === "live-runners")).toMatchObject({ status: "ok" });
    expect(checks.find((c) => c.name === "shard-owners")).toMatchObject({ status: "ok" });

    // SIGSTOP: its session stays open, but its heartbeat goes stale, so it is no longer live.
    (roles.b as RoleProcess).kill("SIGSTOP");
    const stopped = await until("the stopped runner not live", (r) => r.live.runner === 1);
    expect(runnerRow(stopped, roles.b as RoleProcess)).toMatchObject({ live: false, shards: [] });
    (roles.b as RoleProcess).kill("SIGCONT");
    await until("the resumed runner live again", (r) => r.live.runner === 2);

    // kill -9 of one runner: named as not live, and the survivor takes every runner shard.
    (roles.a as RoleProcess).kill("SIGKILL");
    const one = await until(
      "one live runner owning every runner shard",
      (r) => r.live.runner === 1 && runnerRow(r, roles.b as RoleProcess)?.shards.length === SHARDS,
    );
    expect(runnerRow(one, roles.a as RoleProcess)).toMatchObject({ live: false, shards: [] });
    const afterOne = await runTenor(["runners"], env);
    expect(afterOne.stdout).toMatch(/runner\s.*\sNO\s/);

    // Every runner gone: the api still reports it, and the doctor fails naming the check.
    (roles.b as RoleProcess).kill("SIGKILL");
    // Its heartbeat ages out on its own clock; its locks go when PostgreSQL ends its session, which
    // may come a moment later (a backend notices its client gone only between statements).
    const none = await until(
      "no live runner and no runner shard owned",
      (r) => r.live.runner === 0 && r.shards.find((s: Json) => s.role === "runner").unowned.length === SHARDS,
    );
    expect(none.shards.find((s: Json) => s.role === "runner").unowned).toEqual([...Array(SHARDS).keys()]);
    expect(await liveGauge()).toEqual({ runner: 0, indexer: 1 });
    const runners = await runTenor(["runners"], env);
    expect(runners.stdout).toContain("no live runner: no workflow advances until one starts");
    expect(runners.stdout).toContain(
      `runner shards: ${SHARDS} of ${SHARDS} without an owner (0-${SHARDS - 1})`,
    );
    const doctor = await runTenor(["doctor"], env);
    expect(doctor.code, doctor.stdout).toBe(1);
    expect(doctor.stdout).toMatch(/live-runners\s+FAIL\s+no live runner/);
    expect(doctor.stdout).toMatch(/shard-owners\s+FAIL\s+runner shards without an owner: 8 of 8 \(0-7\)/);
  }, 180_000);
});

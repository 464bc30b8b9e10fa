import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_PACKAGES } from "../../scripts/test-setup/system-packages.js";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { openReservedConnection } from "../../src/ownership/reserved-connection.js";
import { tryLockShard } from "../../src/ownership/store/pg-shard-ownership.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { prismaFor } from "../../src/store/prisma.js";
import { counts, createFaultWorld, type FaultWorld } from "../runtime/fault-harness.js";
import { entryCommand } from "../support/fast-entry.js";
import { type PgBouncer, pgbouncerInstalled, startPgBouncer } from "../support/pgbouncer.js";
import { freePort } from "../support/ports.js";
import {
  killAllProcesses,
  spawnProcess,
  type TestProcess,
  WaitAborted,
  waitUntil,
} from "../support/processes.js";

/**
 * Tenor behind a real PgBouncer (Debian's package, 1.18 on Debian 12) in transaction mode: the
 * role pools go through it with unnamed statements (`database.namedStatements: false`), the
 * reserved sessions (runner liveness, shard ownership) go to PostgreSQL directly
 * (`database.sessionUrl`). Real api and runner role processes; a runner is killed with kill -9
 * inside a step. Then what breaks on this PgBouncer, as findings the code now guards against:
 * named prepared statements, and reserved sessions through the pooler (docs/performance.md,
 * "PgBouncer (transaction mode)").
 */

/** The real role process with the fault workflows. */
const FIXTURE = "test/scale/fixtures/fault-roles.ts";

/** Role processes start several at once here, each a few seconds of CPU: slow on a loaded two-core machine. */
const READY_TIMEOUT_MS = 120_000;

/** The test command's setup step installs pgbouncer (scripts/test-setup.ts), so `npm test` runs this file. */
const SETUP_INSTALLS_PGBOUNCER = SYSTEM_PACKAGES.some((p) => p.name === "pgbouncer");
const INSTALLED = pgbouncerInstalled();

/**
 * First key of the lock the "two owners" finding takes: not a namespace of Tenor's (746001–2), so
 * the test's own runners, which own the real shards of this database, are not in the way.
 */
const FINDING_LOCK_NAMESPACE = 746_099;

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

if (!INSTALLED) {
  describe("Tenor through PgBouncer", () => {
    if (SETUP_INSTALLS_PGBOUNCER)
      it.skip("SKIPPED: /usr/sbin/pgbouncer is not installed here (`npm test` installs it: scripts/test-setup.ts)", () => {});
    else
      it("needs /usr/sbin/pgbouncer, and the test setup must install it", () => {
        throw new Error(
          "pgbouncer is not installed and scripts/test-setup.ts does not install it: this test would never run",
        );
      });
  });
} else {
  let world: FaultWorld;
  /** The deployment's PgBouncer. */
  let bouncer: PgBouncer;
  /** One server connection: which client's statement lands where is then certain. */
  let single: PgBouncer;
  /** Like `single`, but told to drop the `options` startup parameter instead of refusing it. */
  let dropping: PgBouncer;
  /** A runner whose reserved sessions go through `dropping`; started early, it compiles alongside the others. */
  let misrouted: TestProcess;
  let configDir: string;

  beforeAll(async () => {
    world = await createFaultWorld(import.meta.url);
    configDir = mkdtempSync(path.join(tmpdir(), "tenor-pgbouncer-"));
    [bouncer, single, dropping] = await Promise.all([
      // Four server connections for every client of the test database: the api's and both
      // runners' pools (six each) share them, one transaction at a time.
      startPgBouncer({ poolMode: "transaction", defaultPoolSize: 4, adminUsers: ["postgres"] }),
      startPgBouncer({ poolMode: "transaction", defaultPoolSize: 1 }),
      startPgBouncer({ poolMode: "transaction", defaultPoolSize: 1, ignoreStartupParameters: ["options"] }),
    ]);
    const env = roleEnv({ DATABASE_URL: dropping.via(world.db.url) });
    delete env.TENOR_DATABASE_SESSION_URL;
    misrouted = spawnProcess("runner via pooler", ...entryCommand(FIXTURE), {
      env: { ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(await freePort()) },
    });
  });

  afterAll(async () => {
    await killAllProcesses();
    await Promise.allSettled([bouncer?.stop(), single?.stop(), dropping?.stop()]);
    await world?.close();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  /** A role of the fault application (test/scale/fixtures/fault-roles.ts), ready once /readyz answers. */
  async function startRole(
    name: string,
    role: "api" | "runner",
    env: Record<string, string>,
  ): Promise<{ process: TestProcess; port: number }> {
    const port = await freePort();
    const child = spawnProcess(name, ...entryCommand("test/scale/fixtures/fault-roles.ts"), {
      env: {
        ...env,
        DAPI_ROLE: role,
        [role === "api" ? "TENOR_API_PORT" : "TENOR_RUNNER_HEALTH_PORT"]: String(port),
        TENOR_API_HEALTH_PORT: "0",
      },
    });
    try {
      await waitUntil(
        `${name} ready`,
        async () => {
          if (!child.running()) throw new WaitAborted(`${name} exited`);
          return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok === true;
        },
        { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100 },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${child.stdout()}\n${child.stderr()}`);
    }
    return { process: child, port };
  }

  function roleEnv(overrides: Record<string, string> = {}): Record<string, string> {
    const config = path.join(configDir, `config-${randomUUID()}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        logLevel: "info",
        durable: {
          // Locks of a minute: only runner liveness (the direct session) can explain a quick takeover.
          lock: { lockDurationMs: 60_000, stalledIntervalMs: 60_000 },
          sweep: { intervalMs: 500, graceMs: 1_000 },
          liveness: { checkIntervalMs: 200 },
          runnerConcurrency: 20,
        },
        // This machine is loaded by design; the api must not shed the test's requests.
        api: {
          rateLimit: { max: 1_000_000, windowSeconds: 60 },
          admission: { maxPoolWaitMs: 0, maxEventLoopLagMs: 0 },
        },
      }),
    );
    return {
      DATABASE_URL: bouncer.via(world.db.url),
      TENOR_DATABASE_SESSION_URL: world.db.url,
      TENOR_DATABASE_NAMED_STATEMENTS: "false",
      TENOR_DATABASE_POOL_MAX: "6",
      REDIS_URL: world.redisUrl,
      TENOR_REDIS_PREFIX: world.prefix,
      TENOR_CONFIG: config,
      ...overrides,
    };
  }

  describe("Tenor through PgBouncer in transaction mode", () => {
    it("runs api and runners with the pools through PgBouncer and the sessions direct; kill -9 of a runner loses and duplicates nothing", async () => {
      const env = roleEnv();
      const [api, a, b] = await Promise.all([
        startRole("api", "api", env),
        startRole("runner A", "runner", env),
        startRole("runner B", "runner", env),
      ]);
      const keys = new PgApiKeys(world.db.pool);
      const integrator = (await issueApiKey(keys, { orgId: "scale", role: "integrator", subject: "i" })).key;
      const operator = (await issueApiKey(keys, { orgId: "scale", role: "operator", subject: "o" })).key;
      const call = async (key: string, method: string, url: string, body?: unknown) => {
        const res = await fetch(`http://127.0.0.1:${api.port}${url}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body ? { "content-type": "application/json" } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return { status: res.status, body: (await res.json()) as Json };
      };

      // The pools are PgBouncer's clients; the reserved sessions are not: they reach PostgreSQL directly.
      const clients = (await bouncer.admin("SHOW CLIENTS")).filter((c) => c.database === world.db.name);
      const pooled = new Set(clients.map((c) => c.application_name));
      expect(pooled).toEqual(new Set(["tenor-api", "tenor-runner"]));
      const { rows: direct } = await world.db.pool.query<{ name: string; n: number }>(
        `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
          WHERE datname = $1 AND application_name LIKE 'tenor-runner-%' GROUP BY 1 ORDER BY 1`,
        [world.db.name],
      );
      expect(direct).toEqual([
        { name: "tenor-runner-liveness", n: 2 },
        { name: "tenor-runner-shards", n: 2 },
      ]);

      const gate = "pgbouncer-kill";
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const started = await call(integrator, "POST", "/v1/workflows/fault.steps/executions", {
          steps: 3,
          gateAt: 1,
          gate,
        });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        ids.push(started.body.id as string);
      }
      for (const id of ids)
        await waitUntil(
          `execution ${id} inside s1`,
          async () => (await world.sideEffects(id)).s1?.length === 1,
        );
      const onA: string[] = [];
      for (const id of ids) if ((await world.sideEffects(id)).s1?.[0] === a.process.pid) onA.push(id);
      const [dead, survivor] = onA.length > 0 ? [a.process, b.process] : [b.process, a.process];
      const affected = onA.length > 0 ? onA : ids;

      await dead.kill();
      await world.openGate(gate);
      for (const id of ids)
        await waitUntil(
          `execution ${id} completed through the API`,
          async () => {
            const view = await call(operator, "GET", `/v1/executions/${id}`);
            if (view.body.status === "failed") throw new Error(JSON.stringify(view.body));
            return view.body.status === "completed";
          },
          { timeoutMs: 40_000, intervalMs: 200 },
        );
      await survivor.waitFor(/took over the jobs of a runner whose session ended/, 5_000);
      for (const id of affected) {
        const effects = await world.sideEffects(id);
        // Only the step interrupted by the kill ran twice (its work had no checkpoint yet).
        expect(counts(effects)).toEqual({ s0: 1, s1: 2, s2: 1 });
        expect(effects.s1).toEqual([dead.pid, survivor.pid]);
      }
      for (const id of ids.filter((i) => !affected.includes(i)))
        expect(counts(await world.sideEffects(id))).toEqual({ s0: 1, s1: 1, s2: 1 });
      // Every step of every execution journaled exactly once, in order.
      for (const id of ids) {
        const steps = (await world.journal(id)).filter((e) => e.kind === "step").map((e) => e.name);
        expect(steps).toEqual(["s0", "s1", "s2"]);
      }
      // And all of it went through PgBouncer: it counted the transactions.
      const stats = (await bouncer.admin("SHOW STATS")).find((s) => s.database === world.db.name);
      expect(Number(stats?.total_xact_count)).toBeGreaterThan(100);
      await Promise.all([api.process.kill(), survivor.kill()]);
    }, 240_000);
  });

  describe("what transaction-mode PgBouncer 1.18 breaks (findings)", () => {
    const pools: pg.Pool[] = [];

    afterAll(async () => {
      await Promise.allSettled(pools.map((p) => p.end()));
    });

    function pool(url: string, namedStatements: boolean): pg.Pool {
      const created = createPgPool(url, { applicationName: "tenor-pgbouncer-test", max: 1, namedStatements });
      pools.push(created);
      return created;
    }

    it("named prepared statements fail across clients; unnamed ones (database.namedStatements: false) pass", async () => {
      const url = single.via(world.db.url);
      const id = randomUUID();
      const [first, second] = [pool(url, true), pool(url, true)].map((p) => new PgExecutionStore(p));
      expect(await first?.currentTurn(id)).toBeNull();
      // The second client prepares `tenor_current_turn` again on the one server connection.
      await expect(second?.currentTurn(id)).rejects.toMatchObject({ code: "42P05" });

      const unnamed = [pool(url, false), pool(url, false)].map((p) => new PgExecutionStore(p));
      for (let round = 0; round < 3; round++)
        for (const store of unnamed) expect(await store.currentTurn(id)).toBeNull();
    });

    it("Prisma Client (@prisma/adapter-pg) works through it: its statements are unnamed", async () => {
      const url = single.via(world.db.url);
      const [one, two] = [prismaFor(pool(url, true)), prismaFor(pool(url, true))];
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          [one, two].map((prisma) =>
            // One server connection: the second BEGIN waits in PgBouncer until the first COMMIT;
            // Prisma's default 2 s to start a transaction is short on a loaded machine.
            prisma?.$transaction(
              async (tx) => {
                await tx.schedule.findMany({ take: 1 });
                return tx.schedule.count();
              },
              { maxWait: 30_000, timeout: 30_000 },
            ),
          ),
        );
      }
      expect(await one?.schedule.count()).toBe(await two?.schedule.count());
    });

    it("a reserved session through it is refused: PgBouncer rejects its startup options", async () => {
      const opening = openReservedConnection({
        connectionString: single.via(world.db.url),
        applicationName: "tenor-pgbouncer-test",
        deadPeerMs: 3_000,
        connectTimeoutMs: 5_000,
      });
      await expect(opening).rejects.toMatchObject({
        code: "RESERVED_SESSION_POOLED",
        message: expect.stringMatching(/unsupported startup parameter: options/),
      });
    });

    it("with the options ignored, two owners would hold one shard lock; the reserved session refuses that too", async () => {
      const url = dropping.via(world.db.url);
      const owners = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
      try {
        for (const owner of owners) await owner.connect();
        // The finding: both "sessions" are one server backend, so both take shard 7's lock.
        const [mine, theirs] = owners;
        expect(await tryLockShard(mine as pg.Client, FINDING_LOCK_NAMESPACE, 7)).toBe(true);
        expect(await tryLockShard(theirs as pg.Client, FINDING_LOCK_NAMESPACE, 7)).toBe(true);
        await mine?.query("SELECT pg_advisory_unlock_all()");
      } finally {
        await Promise.allSettled(owners.map((o) => o.end()));
      }
      await expect(
        openReservedConnection({
          connectionString: url,
          applicationName: "tenor-pgbouncer-test",
          deadPeerMs: 3_000,
          connectTimeoutMs: 5_000,
        }),
      ).rejects.toMatchObject({
        code: "RESERVED_SESSION_POOLED",
        message: expect.stringMatching(/client_connection_check_interval is 0 ms/),
      });
    });

    it("a runner whose sessions would go through it refuses to start, before it takes work", async () => {
      const runner = misrouted;
      const { code } = await runner.exit;
      expect(code).toBe(1);
      const output = runner.stdout() + runner.stderr();
      expect(output).toContain("RESERVED_SESSION_POOLED");
      expect(output).toContain("TENOR_DATABASE_SESSION_URL");
      expect(output).not.toContain("runner started");
    });
  });
}

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARD_LOCK_NAMESPACE } from "../../src/ownership/shard-map.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { killAllProcesses, spawnProcess, type TestProcess, waitUntil } from "../support/processes.js";

/**
 * Shard ownership with real processes (test/fixtures/shard-owner-process.ts), each holding its
 * shards with session advisory locks on a reserved connection. The truth is read from pg_locks,
 * joined to the replicas' heartbeat rows, never from what a process believes.
 */

let db: TestDatabase;
const SHARDS = 16;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

interface Replica {
  id: string;
  process: TestProcess;
  /** The last owned set the process printed. */
  reported(): number[];
  overruns(): number;
}

function startReplica(id: string, timings: { refreshMs: number; livenessMs: number }): Replica {
  const process = spawnProcess(id, ...entryCommand("test/fixtures/shard-owner-process.ts"), {
    env: {
      DATABASE_URL: db.url,
      REPLICA_ID: id,
      SHARD_COUNT: String(SHARDS),
      REFRESH_MS: String(timings.refreshMs),
      LIVENESS_MS: String(timings.livenessMs),
    },
  });
  const owned = () =>
    process
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"event":"owned"'))
      .map((line) => JSON.parse(line) as { shards: number[]; overruns: number });
  return {
    id,
    process,
    reported: () => owned().at(-1)?.shards ?? [],
    overruns: () => owned().at(-1)?.overruns ?? 0,
  };
}

/** Who holds each shard's advisory lock, by replica id (via the heartbeat row's backend pid). */
async function holders(): Promise<Map<number, string[]>> {
  const { rows } = await db.pool.query<{ shard: number; replica: string | null; pid: number }>(
    `SELECT l.objid::int AS shard, l.pid, r.id AS replica
       FROM pg_locks l LEFT JOIN replicas r ON r.backend_pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = $1::int::oid AND l.objsubid = 2 AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [SHARD_LOCK_NAMESPACE.runner],
  );
  const map = new Map<number, string[]>();
  for (const row of rows)
    map.set(row.shard, [...(map.get(row.shard) ?? []), row.replica ?? `pid:${row.pid}`]);
  return map;
}

/** Advisory shard locks held by anyone, without touching the replicas table (which a test may lock). */
async function lockCount(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND classid = $1::int::oid AND objsubid = 2 AND granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [SHARD_LOCK_NAMESPACE.runner],
  );
  return rows[0]?.n ?? 0;
}

async function ownedBy(replica: string): Promise<number[]> {
  const map = await holders();
  return [...map.entries()].filter(([, who]) => who.includes(replica)).map(([shard]) => shard);
}

async function waitBalanced(ids: string[]): Promise<void> {
  const share = Math.ceil(SHARDS / ids.length);
  await waitUntil(`${ids.join(", ")} to hold ${SHARDS} shards fairly`, async () => {
    const map = await holders();
    if (map.size !== SHARDS) return false;
    for (const who of map.values()) if (who.length !== 1) throw new Error("a shard with two holders");
    for (const id of ids) {
      const n = [...map.values()].filter((who) => who[0] === id).length;
      if (n < SHARDS - share * (ids.length - 1) || n > share) return false;
    }
    return true;
  });
}

async function ready(replica: Replica): Promise<void> {
  await replica.process.waitFor(/"event":"ready"/, 20_000);
}

describe("shard ownership across real processes", () => {
  it("splits shards fairly, and after kill -9 another replica owns them all within seconds", async () => {
    // Production defaults: refresh 2 s, liveness 10 s, so the handover measured is the real one.
    const timings = { refreshMs: 2_000, livenessMs: 10_000 };
    const a = startReplica("kill-a", timings);
    await ready(a);
    const b = startReplica("kill-b", timings);
    await ready(b);
    await waitBalanced([a.id, b.id]);
    const killedAt = Date.now();
    await a.process.kill();
    await waitUntil("kill-b to own every shard", async () => (await ownedBy(b.id)).length === SHARDS, {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    const handoverMs = Date.now() - killedAt;
    console.log(`shard handover after kill -9: ${(handoverMs / 1000).toFixed(2)} s (refresh 2 s)`);
    expect(handoverMs).toBeLessThan(5_000);
    await waitUntil("kill-b to report every shard", () => b.reported().length === SHARDS);
    await b.process.kill();
  });

  it("never gives a frozen (SIGSTOP) owner's shards to a second owner while its session lives", async () => {
    const timings = { refreshMs: 300, livenessMs: 1_500 };
    const a = startReplica("stop-a", timings);
    await ready(a);
    const b = startReplica("stop-b", timings);
    await ready(b);
    await waitBalanced([a.id, b.id]);
    const frozen = await ownedBy(a.id);
    a.process.signal("SIGSTOP");
    // Three liveness windows: b stops counting a as live and wants every shard, but cannot lock one.
    const until = Date.now() + 3 * timings.livenessMs;
    while (Date.now() < until) {
      const map = await holders();
      for (const [shard, who] of map) expect(who, `holders of shard ${shard}`).toHaveLength(1);
      expect((await ownedBy(a.id)).sort()).toEqual(frozen.sort());
      expect(b.reported().filter((s) => frozen.includes(s))).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    a.process.signal("SIGCONT");
    await waitBalanced([a.id, b.id]);
    expect(a.process.running()).toBe(true);
    await Promise.all([a.process.kill(), b.process.kill()]);
  });

  it("releases every shard when a lock query overruns its deadline, then rebuilds and recovers", async () => {
    const timings = { refreshMs: 300, livenessMs: 1_500 }; // deadline min(300, 500) = 300 ms
    const a = startReplica("overrun-a", timings);
    await ready(a);
    await waitUntil("overrun-a to own every shard", async () => (await ownedBy(a.id)).length === SHARDS);
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      // The heartbeat needs this table: every refresh now blocks past its deadline.
      await blocker.query("LOCK TABLE replicas IN ACCESS EXCLUSIVE MODE");
      await a.process.waitFor(/overran its deadline; released every shard/, 10_000);
      await waitUntil("no shard lock left anywhere", async () => (await lockCount()) === 0, {
        timeoutMs: 5_000,
      });
      await waitUntil("overrun-a to report no shards", () => a.reported().length === 0);
      // Still blocked: it keeps failing safe, owning nothing.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await lockCount()).toBe(0);
    } finally {
      await blocker.query("ROLLBACK").catch(() => undefined);
      await blocker.end();
    }
    await waitUntil(
      "overrun-a to own every shard again",
      async () => (await ownedBy(a.id)).length === SHARDS,
    );
    await waitUntil("overrun-a to report them", () => a.reported().length === SHARDS);
    expect(a.overruns()).toBeGreaterThanOrEqual(1);
    const overrunLine = a.process
      .stdout()
      .split("\n")
      .find((l) => l.includes("overran its deadline"));
    expect(JSON.parse(overrunLine as string)).toMatchObject({
      component: "ownership",
      released: SHARDS,
      overruns: 1,
      deadlineMs: 300,
    });
    await a.process.kill();
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARD_LOCK_NAMESPACE } from "../../src/ownership/shard-map.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { killAllProcesses, spawnProcess, type TestProcess, waitUntil } from "../support/processes.js";

/**
 * A frozen owner inside a fenced write (docs/ownership.md, the section of that name): the owner
 * (a real process) opens a fenced write, holding its shard's `shard_owners` row FOR SHARE, and is
 * frozen with SIGSTOP; its reserved session is ended as the server ends a vanished client's. The
 * fenced transaction cannot outlive that (idle_in_transaction_session_timeout), so a peer takes
 * every shard within the liveness window + 2 s, and its blocked epoch bump for that one shard
 * never costs it the shards it already owns (no overrun).
 */

const SHARDS = 4;
const TIMINGS = { refreshMs: 300, livenessMs: 1_500 };
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

interface Replica {
  process: TestProcess;
  reported(): number[];
  overruns(): number;
}

function startReplica(id: string): Replica {
  const process = spawnProcess(id, ...entryCommand("test/fixtures/shard-owner-process.ts"), {
    env: {
      DATABASE_URL: db.url,
      REPLICA_ID: id,
      SHARD_COUNT: String(SHARDS),
      REFRESH_MS: String(TIMINGS.refreshMs),
      LIVENESS_MS: String(TIMINGS.livenessMs),
    },
  });
  const owned = () =>
    process
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"event":"owned"'))
      .map((line) => JSON.parse(line) as { shards: number[]; overruns: number });
  return {
    process,
    reported: () => owned().at(-1)?.shards ?? [],
    overruns: () => Math.max(0, ...owned().map((o) => o.overruns)),
  };
}

/** Ends the replica's reserved session, as the server does once a vanished client's TCP times out. */
async function endReservedSession(replicaId: string): Promise<void> {
  await db.pool.query(
    `SELECT pg_terminate_backend(r.backend_pid) FROM replicas r
      JOIN pg_stat_activity a ON a.pid = r.backend_pid WHERE r.id = $1`,
    [replicaId],
  );
}

async function advisoryHolders(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND classid = $1::int::oid AND objsubid = 2 AND granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [SHARD_LOCK_NAMESPACE.runner],
  );
  return rows[0]?.n ?? 0;
}

describe("a frozen owner inside a fenced write", () => {
  it("cannot block a takeover past the liveness window + 2 s, and costs the peer none of its shards", async () => {
    const a = startReplica("frozen-a");
    await a.process.waitFor(/"event":"ready"/, 30_000);
    const b = startReplica("peer-b");
    await waitUntil("both replicas to own shards", () => a.reported().length > 0 && b.reported().length > 0, {
      timeoutMs: 30_000,
    });
    // A fenced write holds its row FOR SHARE; the owner freezes in it and its lock session ends.
    a.process.signal("SIGUSR2");
    await a.process.waitFor(/"event":"fenced-write-open"/, 10_000);
    a.process.signal("SIGSTOP");
    await endReservedSession("frozen-a");
    const frozenAt = Date.now();
    await waitUntil("peer-b to own every shard", () => b.reported().length === SHARDS, {
      timeoutMs: TIMINGS.livenessMs + 2_000 + 5_000,
    });
    const takeoverMs = Date.now() - frozenAt;
    console.log(`takeover from a frozen owner inside a fenced write: ${(takeoverMs / 1000).toFixed(2)} s`);
    expect(b.overruns()).toBe(0);
    expect(await advisoryHolders()).toBe(SHARDS);
    a.process.signal("SIGCONT");
    await b.process.kill();
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import {
  killAllProcesses,
  spawnProcess,
  type TestProcess,
  WaitAborted,
  waitUntil,
} from "../support/processes.js";
import { chaosRounds, chaosTimeout } from "./chaos-rounds.js";

/**
 * Chaos: a shard owner frozen (SIGSTOP) inside a fenced write, its lock session then ended as the
 * server ends a vanished client's. Each round a fresh owner joins two healthy peers, takes its
 * share, opens a fenced write and freezes in it. The peers take every shard within the liveness
 * window + 2 s (docs/ownership.md, "A frozen owner inside a fenced write"), never overrun, never
 * drop a shard they already own, and no shard is ever locked twice.
 */

const rounds = chaosRounds();
const SHARDS = 6;
const TIMINGS = { refreshMs: 300, livenessMs: 1_500 };
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await killAllProcesses();
  await db?.drop();
});

interface Owner {
  process: TestProcess;
  reported(): number[];
  /** Every owned set it printed, in order. */
  history(): { shards: number[]; overruns: number }[];
}

function startOwner(id: string): Owner {
  const process = spawnProcess(id, ...entryCommand("test/fixtures/shard-owner-process.ts"), {
    env: {
      DATABASE_URL: db.url,
      REPLICA_ID: id,
      SHARD_COUNT: String(SHARDS),
      REFRESH_MS: String(TIMINGS.refreshMs),
      LIVENESS_MS: String(TIMINGS.livenessMs),
    },
  });
  const history = () =>
    process
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"event":"owned"'))
      .map((line) => JSON.parse(line) as { shards: number[]; overruns: number });
  return { process, history, reported: () => history().at(-1)?.shards ?? [] };
}

async function doubleLocked(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        GROUP BY objid HAVING count(*) > 1) twice`,
  );
  return rows[0]?.n ?? 0;
}

describe("chaos: a shard owner frozen inside a fenced write", () => {
  it(
    `its peers take over within the liveness window + 2 s and keep their own shards (${rounds} round(s))`,
    async () => {
      const peers = [startOwner("peer-1"), startOwner("peer-2")];
      for (const peer of peers) await peer.process.waitFor(/"event":"ready"/, 30_000);
      for (let round = 0; round < rounds; round++) {
        const frozen = startOwner(`frozen-${round}`);
        await waitUntil(
          "the newcomer and both peers to own shards",
          () => frozen.reported().length > 0 && peers.every((p) => p.reported().length > 0),
          { timeoutMs: 30_000 },
        );
        const before = peers.map((p) => p.history().length);
        frozen.process.signal("SIGUSR2");
        await frozen.process.waitFor(/"event":"fenced-write-open"/, 10_000);
        frozen.process.signal("SIGSTOP");
        await db.pool.query(
          `SELECT pg_terminate_backend(r.backend_pid) FROM replicas r
            JOIN pg_stat_activity a ON a.pid = r.backend_pid WHERE r.id = $1`,
          [`frozen-${round}`],
        );
        await waitUntil(
          "the peers to own every shard between them",
          async () => {
            const twice = await doubleLocked();
            if (twice > 0) throw new WaitAborted(`${twice} shard(s) locked by two sessions`);
            return peers.reduce((n, p) => n + p.reported().length, 0) === SHARDS;
          },
          { timeoutMs: TIMINGS.livenessMs + 2_000 + 5_000, intervalMs: 100 },
        );
        for (const [i, peer] of peers.entries()) {
          const changes = peer.history().slice(before[i]);
          // Never an overrun, and each change only adds shards: a peer never lost one it owned.
          expect(changes.every((c) => c.overruns === 0)).toBe(true);
          for (let c = 1; c < changes.length; c++) {
            const previous = changes[c - 1]?.shards ?? [];
            expect(previous.every((s) => changes[c]?.shards.includes(s))).toBe(true);
          }
        }
        await frozen.process.kill();
      }
    },
    chaosTimeout(rounds, 30_000),
  );
});

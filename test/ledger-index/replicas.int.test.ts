import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses, type TestProcess, waitUntil } from "../support/processes.js";
import { spawnIndexerProcess } from "./support/indexer-process.js";
import { balancesFromNode, deployToken, dumpIndex, mintSome } from "./support/ledger-world.js";

/**
 * Indexer replicas as real processes (test/fixtures/ledger-indexer-process.ts: the production
 * ShardOwner and LedgerIndexer): a killed ingest owner is replaced and its successor resumes
 * from the checkpoint; a frozen owner's late write is refused by the owner epoch; two replicas
 * share the catch-up ranges and a killed one's range is completed by the other, once.
 */

let anvil: Anvil | undefined;
let db: TestDatabase | undefined;

afterEach(async () => {
  await killAllProcesses();
  await anvil?.stop();
  await db?.drop();
  anvil = undefined;
  db = undefined;
});

afterAll(killAllProcesses);

interface World {
  anvil: Anvil;
  db: TestDatabase;
  token: `0x${string}`;
}

/** A chain of about `blocks` blocks with `mints` Transfer logs spread over it, and the token in acme's scope. */
async function world(mints: number, emptyBlocksBetween: number): Promise<World> {
  [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  const { token } = await deployToken(anvil);
  for (let i = 0; i < mints; i += 5) {
    await mintSome(anvil, token, 5, i);
    await anvil.mine(emptyBlocksBetween);
  }
  await db.pool.query(
    "INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height) VALUES ($1, 'acme', $2, 'erc20', 0)",
    [anvil.chainId, token],
  );
  return { anvil, db, token };
}

function replica(w: World, id: string, env: Record<string, string> = {}): TestProcess {
  return spawnIndexerProcess({
    databaseUrl: w.db.url,
    rpcUrl: w.anvil.url,
    chainId: w.anvil.chainId,
    replicaId: id,
    env: { REFRESH_MS: "300", LIVENESS_MS: "1500", ...env },
  });
}

async function chainOwner(w: World): Promise<string | undefined> {
  const { rows } = await w.db.pool.query(
    "SELECT owner_id FROM shard_owners WHERE domain = 'indexer' AND shard = 0",
  );
  return rows[0]?.owner_id;
}

async function indexedHeight(w: World): Promise<bigint> {
  const { rows } = await w.db.pool.query(
    "SELECT indexed_height::text AS h FROM ledger_chains WHERE chain_id = $1",
    [w.anvil.chainId],
  );
  return rows[0] ? BigInt(rows[0].h) : -1n;
}

/** The index holds exactly the node's Transfer logs, each once, and the balances they fold to. */
async function expectIndexEqualsNode(w: World): Promise<void> {
  const node = await balancesFromNode(w.anvil, w.token);
  const index = await dumpIndex(w.db.pool, w.anvil.chainId);
  expect(index.transfers).toHaveLength(node.logs);
  expect(Object.fromEntries(index.balances.map((b) => [b.holder, b.balance]))).toEqual(
    Object.fromEntries([...node.balances].filter(([, v]) => v !== 0n).map(([h, v]) => [h, v.toString()])),
  );
}

describe("indexer replicas", () => {
  it("a killed ingest owner is replaced and its successor resumes from the checkpoint: no gap, no duplicate", async () => {
    // Depth 1000: the whole chain is the live tail's (no catch-up), two blocks per batch.
    const w = await world(40, 30);
    const env = { DEPTH: "1000", BATCH_BLOCKS: "2" };
    const a = replica(w, "tail-a", env);
    const b = replica(w, "tail-b", env);
    await Promise.all([a.waitFor(/"event":"ready"/), b.waitFor(/"event":"ready"/)]);
    const first = await waitUntil("an ingest owner", () => chainOwner(w));
    const head = await w.anvil.public.getBlockNumber();
    await waitUntil("50 blocks indexed", async () => (await indexedHeight(w)) >= 50n, { intervalMs: 10 });
    const victim = first === "tail-a" ? a : b;
    victim.signal("SIGKILL");
    await victim.exit;
    const atKill = await indexedHeight(w);
    expect(atKill).toBeLessThan(head);
    await waitUntil("the other replica owns the chain", async () => (await chainOwner(w)) !== first);
    await waitUntil("the index at the head", async () => (await indexedHeight(w)) === head, {
      timeoutMs: 60_000,
    });
    await expectIndexEqualsNode(w);
    const survivor = first === "tail-a" ? b : a;
    expect(survivor.stdout()).toContain("ledger live tail started");
  });

  it("a frozen owner resumed after a takeover has its batch refused by the owner epoch", async () => {
    const w = await world(10, 2);
    const env = { DEPTH: "1000", BATCH_BLOCKS: "50" };
    const a = replica(w, "frozen-a", env);
    await a.waitFor(/"event":"ready"/);
    await waitUntil("frozen-a owns the chain", async () => (await chainOwner(w)) === "frozen-a");
    const b = replica(w, "peer-b", env);
    await b.waitFor(/"event":"ready"/);
    await waitUntil(
      "the index at the head",
      async () => (await indexedHeight(w)) === (await w.anvil.public.getBlockNumber()),
    );
    // Hold a's next batch just before its commit, then freeze it there.
    a.signal("SIGUSR2");
    await mintSome(w.anvil, w.token, 3, 7);
    await a.waitFor(/"event":"batch-held"/);
    a.signal("SIGSTOP");
    // Its reserved session ends, as the server ends a vanished client's; b takes the chain.
    await w.db.pool.query(
      `SELECT pg_terminate_backend(r.backend_pid) FROM replicas r
       JOIN pg_stat_activity s ON s.pid = r.backend_pid WHERE r.id = 'frozen-a'`,
    );
    await waitUntil("peer-b owns the chain", async () => (await chainOwner(w)) === "peer-b", {
      timeoutMs: 20_000,
    });
    const head = await w.anvil.public.getBlockNumber();
    await waitUntil("peer-b indexed the held blocks", async () => (await indexedHeight(w)) === head);
    a.signal("SIGCONT");
    a.signal("SIGUSR1");
    await a.waitFor(/ledger write refused: stale owner epoch/, 20_000);
    expect(a.stdout().indexOf('"event":"batch-released"')).toBeLessThan(
      a.stdout().indexOf("ledger write refused: stale owner epoch"),
    );
    await expectIndexEqualsNode(w);
  });

  it("two replicas share the catch-up ranges; a killed one's range is completed by the other, every range once", async () => {
    // Depth 2: nearly the whole chain is settled history, split into ranges of 15 blocks (3 commits
    // each). Replica a alone first: it completes its first range and holds inside its second
    // (its third commit that does not complete a range); then b joins, and a is killed.
    const w = await world(60, 4);
    const env = { DEPTH: "2", BATCH_BLOCKS: "5", RANGE_BLOCKS: "15", LEASE_MS: "1500" };
    const a = replica(w, "ranges-a", { ...env, HOLD_AT_RANGE_COMMIT: "3" });
    const held = await a.waitFor(/"event":"range-held","rangeId":"(\d+)"/, 60_000);
    const b = replica(w, "ranges-b", env);
    await b.waitFor(/"event":"ready"/);
    a.signal("SIGKILL");
    await a.exit;
    const rangeId = held[1] as string;
    await waitUntil(
      "every range completed",
      async () => {
        const { rows } = await w.db.pool.query(
          "SELECT count(*)::int AS open FROM ledger_ranges WHERE completed_at IS NULL",
        );
        const total = await w.db.pool.query("SELECT count(*)::int AS n FROM ledger_ranges");
        return total.rows[0].n > 0 && rows[0].open === 0;
      },
      { timeoutMs: 60_000 },
    );
    const { rows } = await w.db.pool.query(
      "SELECT id::text, completed_by, lease_epoch::int AS epoch FROM ledger_ranges ORDER BY id",
    );
    expect(rows.find((r) => r.id === rangeId)).toMatchObject({ completed_by: "ranges-b" });
    expect(rows.find((r) => r.id === rangeId)?.epoch).toBeGreaterThanOrEqual(2);
    expect(new Set(rows.map((r) => r.completed_by))).toEqual(new Set(["ranges-a", "ranges-b"]));
    // Each range's completion was logged once, across both replicas. A replica logs a completion
    // after its commit, so the last line may reach its output just after the row is visible.
    const completions = () =>
      `${a.stdout()}${b.stdout()}`
        .split("\n")
        .filter((line) => line.includes("ledger range completed"))
        .map((line) => JSON.parse(line).rangeId as string);
    await waitUntil("every completion logged", () => completions().length >= rows.length);
    expect(completions().sort()).toEqual(rows.map((r) => r.id).sort());
    await waitUntil(
      "the index at the head",
      async () => (await indexedHeight(w)) === (await w.anvil.public.getBlockNumber()),
    );
    await expectIndexEqualsNode(w);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { labelViolations, sampleValue } from "../observability/metric-labels.js";
import { type Anvil, startAnvil } from "../support/anvil.js";
import { writeTestConfig } from "../support/config-file.js";
import type { TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { killAllProcesses, waitUntil } from "../support/processes.js";
import { type RoleProcess, spawnRole } from "../support/role-process.js";
import { createTestStores, type TestStores } from "../support/test-stores.js";
import { balancesFromNode, deployToken, dumpIndex, mintSome } from "./support/ledger-world.js";

/**
 * The indexer role (workers/main.ts, DAPI_ROLE=indexer) runs the Ledger Index of its configured chains:
 * history through catch-up ranges, the tip through the live tail, and the health as metrics.
 */

let anvil: Anvil;
let stores: TestStores;
let db: TestDatabase;
let role: RoleProcess;
let healthPort: number;

beforeAll(async () => {
  [anvil, stores] = await Promise.all([startAnvil(), createTestStores(import.meta.url)]);
  db = stores.db;
  const config = writeTestConfig("indexer", {
    durable: { sharding: { shardCount: 4, refreshIntervalMs: 300, livenessWindowMs: 1500 } },
    indexer: { pollIntervalMs: 100, batchBlocks: 10, rangeBlocks: 15, leaseMs: 5000 },
    chains: [{ id: anvil.chainId, name: "anvil", rpcUrls: [anvil.url], finality: { depth: 3 } }],
  });
  healthPort = await freePort();
  role = spawnRole({
    ...stores.env,
    TENOR_CONFIG: config.file,
    TENOR_INDEXER_HEALTH_PORT: String(healthPort),
    DAPI_ROLE: "indexer",
  });
});

afterAll(async () => {
  role?.kill("SIGKILL");
  await role?.exited;
  await killAllProcesses();
  await anvil?.stop();
  await stores?.drop();
});

describe("the indexer role", () => {
  it("indexes a tracked token's history and tip and serves the index's health as metrics", async () => {
    const { token, block } = await deployToken(anvil);
    await mintSome(anvil, token, 25);
    await db.pool.query(
      "INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height) VALUES ($1, 'acme', $2, 'erc20', $3)",
      [anvil.chainId, token, block.toString()],
    );
    await waitUntil("the role ready", async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok, {
      timeoutMs: 60_000,
    });
    await mintSome(anvil, token, 5, 3);
    const head = await anvil.public.getBlockNumber();
    const indexed = async () => {
      const { rows } = await db.pool.query(
        `SELECT c.indexed_height::text AS h, (SELECT count(*)::int FROM ledger_ranges WHERE completed_at IS NULL) AS open
         FROM ledger_chains c`,
      );
      return rows[0] && BigInt(rows[0].h) >= head && rows[0].open === 0;
    };
    await waitUntil("the token indexed to the head", indexed, { timeoutMs: 60_000 });
    const node = await balancesFromNode(anvil, token);
    expect((await dumpIndex(db.pool, anvil.chainId)).transfers).toHaveLength(node.logs);

    const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    const chain = { chain_id: String(anvil.chainId) };
    expect(sampleValue(text, "tenor_ledger_indexed_height", chain)).toBeGreaterThanOrEqual(Number(head));
    expect(sampleValue(text, "tenor_ledger_head_height", chain)).toBeGreaterThanOrEqual(Number(head));
    expect(sampleValue(text, "tenor_ledger_last_reorg_depth", chain)).toBe(0);
    expect(sampleValue(text, "tenor_ledger_lag_blocks", chain)).toBeGreaterThanOrEqual(0);
    expect(sampleValue(text, "tenor_ledger_lag_seconds", chain)).toBeGreaterThanOrEqual(0);
    expect(labelViolations(text)).toEqual([]);
    // The same health the platform status and the blockchain-health schedule report, per chain.
    const health = await new PgLedgerReads(db.pool).health();
    expect(health).toEqual([
      expect.objectContaining({ chainId: anvil.chainId, lastReorgDepth: 0, openRanges: 0 }),
    ]);
    const [row] = health;
    expect(BigInt(row?.indexedHeight ?? "0")).toBeGreaterThanOrEqual(head);
    expect(BigInt(row?.headHeight ?? "0") - BigInt(row?.indexedHeight ?? "0")).toBe(
      BigInt(row?.lagBlocks ?? -1),
    );
  });
});

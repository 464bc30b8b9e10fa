import type { Pool } from "pg";
import { createWalletClient, type Hex, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { startAnvilProcess } from "../../scripts/dev-chain/anvil-process.js";
import { startChainRunner } from "../lib/chain-runner.js";
import { nowMs, sleep } from "../lib/concurrency.js";
import { measure, notMeasured, type SystemResult, type Workload, type WorkloadContext } from "./types.js";

/** anvil's first two dev accounts (public keys of a public mnemonic): one sender per system. */
const FLOOR_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const RECIPIENT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const CHAIN_ID = 31337;
/** The secret's variable and value: anvil's second dev account (a public key of a public mnemonic). */
const SIGNER_KEY_ENV = "BENCH_CHAIN_SIGNER_KEY";
const SIGNER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const SHARD_COUNT = 64;

/**
 * W10: value transfers from one sender on a real anvil (automine), all started at once. The floor
 * is a bare viem loop: sign and `sendTransaction` with explicit nonces, then wait for every
 * receipt. Tenor runs each transfer through the whole lifecycle (`chain.transaction`: plan,
 * estimate, funding check, keyed nonce reservation, journaled signature, broadcast, the
 * confirmation watcher's inclusion and finality at depth 1) on one real runner process.
 */
export const w10ChainTransfers: Workload = {
  id: "W10",
  title: "chain transfers",
  async run(ctx) {
    const transfers = ctx.quick ? 50 : 200;
    const anvil = await startAnvilProcess({ port: 0, chainId: CHAIN_ID });
    // The sender's bound on unmined transactions (docs/chains.md, "Pending transactions per
    // sender") is as many as the workload sends: the bare loop sends every transfer at once, and
    // anvil accepts any number. The product default (16) is measured in docs/performance.md.
    const systems: Record<string, SystemResult> = {
      bullmq: notMeasured("BullMQ has no chain transaction lifecycle"),
      dbos: notMeasured("DBOS has no chain transaction lifecycle"),
    };
    try {
      systems.floor = await measure(ctx, "floor", () => floorTransfers(anvil.url, transfers));
      systems.tenor = await measure(ctx, "tenor", () => tenorTransfers(ctx, anvil.url, transfers));
    } finally {
      await anvil.stop();
    }
    return {
      id: "W10",
      title: "chain transfers",
      status: "ok",
      params: {
        transfers,
        senders: 1,
        automine: true,
        finalityDepth: 1,
        watcherIntervalMs: WATCH_MS,
        maxPendingPerSender: transfers,
        tenor:
          "the compiled runner role (node dist/workers/main.js) on product defaults but the chain, its signer, its maxPendingPerSender, durable.sharding.shardCount 64 and the watcher interval",
      },
      systems,
    };
  },
};

/** The confirmation watcher's period in this workload: the smallest the configuration allows. */
const WATCH_MS = 50;

async function floorTransfers(url: string, transfers: number): Promise<SystemResult> {
  const account = privateKeyToAccount(FLOOR_KEY);
  const wallet = createWalletClient({
    account,
    chain: { ...foundry, id: CHAIN_ID },
    transport: http(url),
  }).extend(publicActions);
  const first = await wallet.getTransactionCount({ address: account.address, blockTag: "pending" });
  const fees = await wallet.estimateFeesPerGas();
  const begun = nowMs();
  const hashes = await Promise.all(
    Array.from({ length: transfers }, (_, i) =>
      wallet.sendTransaction({ to: RECIPIENT, value: 1n, nonce: first + i, gas: 21_000n, ...fees }),
    ),
  );
  const receipts = await Promise.all(
    hashes.map((hash) => wallet.waitForTransactionReceipt({ hash, pollingInterval: 20 })),
  );
  const wallMs = nowMs() - begun;
  const failed = receipts.filter((r) => r.status !== "success").length;
  return {
    status: "ok",
    figures: { transfersPerSec: transfers / (wallMs / 1000), failedTransfers: failed },
    details: { wallMs },
  };
}

/**
 * Tenor as deployed: the compiled runner role (`dist/workers/main.js`, DAPI_ROLE=runner) in its own
 * process, configured with the chain and one local signer `bench` of organisation `bench`; the
 * bench process only starts executions. Measured once the runner owns every shard: its
 * confirmation watcher examines only executions of shards it owns.
 */
async function tenorTransfers(ctx: WorkloadContext, url: string, transfers: number): Promise<SystemResult> {
  const databaseUrl = await ctx.env.freshDatabase("w10");
  const prefix = ctx.env.prefix("w10-tenor");
  const chain = await startChainRunner(
    ctx,
    {
      databaseUrl,
      prefix,
      config: {
        durable: {
          sharding: { shardCount: SHARD_COUNT },
          confirmationWatcher: { intervalMs: WATCH_MS },
        },
        chains: [
          {
            id: CHAIN_ID,
            name: "bench",
            rpcUrls: [url],
            finality: { depth: 1 },
            maxPendingPerSender: transfers,
          },
        ],
        signers: [{ id: "bench", kind: "local", orgId: "bench", privateKey: { env: SIGNER_KEY_ENV } }],
      },
      secrets: { [SIGNER_KEY_ENV]: SIGNER_KEY },
    },
    SHARD_COUNT,
  );
  const { runner, pool } = chain;
  try {
    const commitsBefore = await databaseCommits(pool);
    const begun = nowMs();
    await Promise.all(
      Array.from({ length: transfers }, () =>
        chain.startTransfer({ chainId: CHAIN_ID, signerId: "bench", to: RECIPIENT, valueWei: "1" }),
      ),
    );
    const outcome = await settled(pool, transfers);
    const wallMs = nowMs() - begun;
    if (outcome.failed > 0) runner.keepLog();
    const commits = (await databaseCommits(pool)) - commitsBefore;
    return {
      status: "ok",
      figures: { transfersPerSec: transfers / (wallMs / 1000), failedTransfers: outcome.failed },
      details: { wallMs, commitsPerTransfer: commits / transfers, ...(await runShape(pool)) },
    };
  } finally {
    await chain.close();
  }
}

/** Transactions committed in the run's database so far (every client, the bench's reads included). */
async function databaseCommits(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ commits: string }>(
    "SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()",
  );
  return Number(rows[0]?.commits ?? 0);
}

/**
 * Where a transfer's time went, read from the journal before the database is dropped: turns per
 * transfer, and the medians from the start to `plan` (waiting for a turn slot) and from the nonce
 * counts to the first signature (the reservation, whichever way the lifecycle version waits for it).
 */
async function runShape(pool: Pool): Promise<Record<string, number | null>> {
  const { rows } = await pool.query<{ turns: string; plan_ms: string | null; reserve_ms: string | null }>(
    `WITH per AS (
       SELECT e.id, e.turn, e.created_at,
              max(j.completed_at) FILTER (WHERE j.name = 'plan') AS planned,
              max(j.completed_at) FILTER (WHERE j.name = 'nonce.counts:0') AS counted,
              max(j.started_at) FILTER (WHERE j.name = 'sign:0') AS signing
       FROM executions e JOIN journal_entries j ON j.execution_id = e.id
       GROUP BY e.id, e.turn, e.created_at)
     SELECT avg(turn)::text AS turns,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM planned - created_at) * 1000)::text AS plan_ms,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM signing - counted) * 1000)::text AS reserve_ms
     FROM per`,
  );
  const row = rows[0];
  const num = (v: string | null | undefined) => (v == null ? null : Number(v));
  return {
    turnsPerTransfer: num(row?.turns),
    planMsP50: num(row?.plan_ms),
    nonceMsP50: num(row?.reserve_ms),
  };
}

/** Waits until `count` executions are terminal (PostgreSQL's status), checking every 20 ms. */
async function settled(pool: Pool, count: number): Promise<{ completed: number; failed: number }> {
  for (;;) {
    const { rows } = await pool.query<{ completed: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE status = 'completed') AS completed,
              count(*) FILTER (WHERE status = 'failed') AS failed FROM executions`,
    );
    const completed = Number(rows[0]?.completed ?? 0);
    const failed = Number(rows[0]?.failed ?? 0);
    if (completed + failed >= count) return { completed, failed };
    await sleep(20);
  }
}

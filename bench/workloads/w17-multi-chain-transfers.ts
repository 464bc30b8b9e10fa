import type { Pool } from "pg";
import { createPublicClient, createWalletClient, type Hex, http, publicActions, toHex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { type AnvilProcess, startAnvilProcess } from "../../scripts/dev-chain/anvil-process.js";
import { startChainRunner } from "../lib/chain-runner.js";
import { forEachLimit, nowMs, pollUntil, sleep } from "../lib/concurrency.js";
import { measure, notMeasured, type SystemResult, type Workload, type WorkloadContext } from "./types.js";

const CHAINS = [31_337, 31_338, 31_339, 31_340];
const SENDERS = 8;
/** anvil's public dev mnemonic: its accounts 0–7 send on every chain, account 9 receives. */
const MNEMONIC = "test test test test test test test test test test test junk";
const RECIPIENT = mnemonicToAccount(MNEMONIC, { addressIndex: 9 }).address;
const SHARD_COUNT = 64;
/** The confirmation watcher's period in this workload: the smallest the configuration allows. */
const WATCH_MS = 50;
/** Longest the Tenor run may take before it is reported as an error, in ms. */
const TENOR_DEADLINE_MS = 15 * 60_000;

/** A sender's private key; its address comes from the same derivation. */
function senderKey(index: number): Hex {
  const key = mnemonicToAccount(MNEMONIC, { addressIndex: index }).getHdKey().privateKey;
  if (!key) throw new Error(`no private key for dev account ${index}`);
  return toHex(key);
}

/**
 * W17: value transfers from many senders on many chains at once — 4 anvil chains (automine) × 8
 * senders × 100 transfers (quick: 20), all started together. The floor is a bare viem program:
 * every sender on every chain signs and sends its transfers with explicit nonces, all senders
 * concurrently, then waits for every receipt, timed from the first send to the last receipt. Tenor runs each
 * transfer through the whole lifecycle on one compiled runner process, configured with the four
 * chains and eight local signers, timed from the first start to the last terminal status. Each
 * system gets fresh chains. Both are checked the same way: every transfer succeeded, and each
 * sender's mined nonces on each chain are exactly 0…n−1 (`nonceGaps` counts the senders where not).
 */
export const w17MultiChainTransfers: Workload = {
  id: "W17",
  title: "multi-chain transfers",
  async run(ctx) {
    const perSender = ctx.quick ? 20 : 100;
    const systems: Record<string, SystemResult> = {
      bullmq: notMeasured("BullMQ has no chain transaction lifecycle"),
      dbos: notMeasured("DBOS has no chain transaction lifecycle"),
    };
    systems.floor = await measure(ctx, "floor", () =>
      onFreshChains((urls) => floorTransfers(urls, perSender)),
    );
    systems.tenor = await measure(ctx, "tenor", () =>
      onFreshChains((urls) => tenorTransfers(ctx, urls, perSender)),
    );
    return {
      id: "W17",
      title: "multi-chain transfers",
      status: "ok",
      params: {
        chains: CHAINS.length,
        sendersPerChain: SENDERS,
        transfersPerSender: perSender,
        transfers: CHAINS.length * SENDERS * perSender,
        automine: true,
        finalityDepth: 1,
        watcherIntervalMs: WATCH_MS,
        tenor:
          "the compiled runner role (node dist/workers/main.js) on product defaults but the chains, eight local signers, durable.sharding.shardCount 64 and the watcher interval",
      },
      systems,
    };
  },
};

async function onFreshChains(run: (urls: string[]) => Promise<SystemResult>): Promise<SystemResult> {
  const anvils: AnvilProcess[] = [];
  try {
    // A generous start timeout: the shared machine spawns slowly under load.
    for (const chainId of CHAINS)
      anvils.push(await startAnvilProcess({ port: 0, chainId, timeoutMs: 60_000 }));
    return await run(anvils.map((a) => a.url));
  } finally {
    await Promise.all(anvils.map((a) => a.stop()));
  }
}

/**
 * The floor: each of the 32 senders signs and sends its transfers in nonce order (one send in
 * flight per sender, all senders at once), then waits until its account nonce on its chain shows
 * them all mined, then reads their receipts (16 at a time per sender) to check each succeeded.
 * Timed from the first send to the last receipt read.
 */
async function floorTransfers(urls: string[], perSender: number): Promise<SystemResult> {
  const wallets = urls.flatMap((url, c) =>
    Array.from({ length: SENDERS }, (_, s) =>
      createWalletClient({
        account: mnemonicToAccount(MNEMONIC, { addressIndex: s }),
        chain: { ...foundry, id: CHAINS[c] as number },
        transport: http(url, { timeout: 60_000 }),
      }).extend(publicActions),
    ),
  );
  const fees = await Promise.all(urls.map((_, c) => wallets[c * SENDERS]?.estimateFeesPerGas()));
  const firsts = await Promise.all(
    wallets.map((w) => w.getTransactionCount({ address: w.account.address, blockTag: "pending" })),
  );
  const begun = nowMs();
  const perWallet = await Promise.all(
    wallets.map(async (wallet, w) => {
      const first = firsts[w] as number;
      const hashes: Hex[] = [];
      for (let i = 0; i < perSender; i++) {
        hashes.push(
          await wallet.sendTransaction({
            to: RECIPIENT,
            value: 1n,
            nonce: first + i,
            gas: 21_000n,
            ...fees[Math.floor(w / SENDERS)],
          }),
        );
      }
      await pollUntil(
        `sender ${w} mined`,
        async () =>
          (await wallet.getTransactionCount({ address: wallet.account.address })) >= first + perSender
            ? true
            : null,
        { everyMs: 20, timeoutMs: 600_000 },
      );
      const statuses: string[] = [];
      await forEachLimit(hashes.length, 16, async (i) => {
        statuses.push((await wallet.getTransactionReceipt({ hash: hashes[i] as Hex })).status);
      });
      return { hashes, failed: statuses.filter((status) => status !== "success").length };
    }),
  );
  const wallMs = nowMs() - begun;
  const gaps = await nonceGaps(
    urls,
    perSender,
    perWallet.map(({ hashes }, w) => ({ chain: Math.floor(w / SENDERS), hashes })),
  );
  return {
    status: "ok",
    figures: {
      transfersPerSec: (wallets.length * perSender) / (wallMs / 1000),
      failedTransfers: perWallet.reduce((sum, w) => sum + w.failed, 0),
      nonceGaps: gaps,
    },
    details: { wallMs },
  };
}

/**
 * Tenor as deployed: the compiled runner role in its own process, with the four chains and eight
 * local signers of organisation `bench`; the bench process only starts executions and reads their
 * statuses. Measured once the runner owns every shard.
 */
async function tenorTransfers(
  ctx: WorkloadContext,
  urls: string[],
  perSender: number,
): Promise<SystemResult> {
  const databaseUrl = await ctx.env.freshDatabase("w17");
  const prefix = ctx.env.prefix("w17-tenor");
  const secrets = Object.fromEntries(
    Array.from({ length: SENDERS }, (_, s) => [`BENCH_W17_SIGNER_${s}`, senderKey(s)]),
  );
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
        chains: CHAINS.map((id, c) => ({
          id,
          name: `bench-${c}`,
          rpcUrls: [urls[c]],
          finality: { depth: 1 },
        })),
        signers: Array.from({ length: SENDERS }, (_, s) => ({
          id: `sender-${s}`,
          kind: "local",
          orgId: "bench",
          privateKey: { env: `BENCH_W17_SIGNER_${s}` },
        })),
      },
      secrets,
    },
    SHARD_COUNT,
  );
  const { runner, pool } = chain;
  const total = CHAINS.length * SENDERS * perSender;
  try {
    const begun = nowMs();
    await Promise.all(
      CHAINS.flatMap((chainId) =>
        Array.from({ length: SENDERS * perSender }, (_, i) =>
          chain.startTransfer({ chainId, signerId: `sender-${i % SENDERS}`, to: RECIPIENT, valueWei: "1" }),
        ),
      ),
    );
    const outcome = await settled(pool, total, begun + TENOR_DEADLINE_MS);
    const wallMs = nowMs() - begun;
    const unfinished = total - outcome.completed - outcome.failed;
    if (outcome.failed > 0 || unfinished > 0) runner.keepLog();
    const mined = await minedHashes(pool);
    const gaps = await nonceGaps(
      urls,
      perSender,
      CHAINS.flatMap((chainId, c) =>
        Array.from({ length: SENDERS }, (_, s) => ({
          chain: c,
          hashes: mined
            .filter((m) => m.chainId === chainId && m.signerId === `sender-${s}`)
            .map((m) => m.hash),
        })),
      ),
    );
    return {
      status: "ok",
      figures: {
        // Transfers that completed, per second until all ended or the deadline passed: a run cut
        // short by the deadline counts only what it finished.
        transfersPerSec: outcome.completed / (wallMs / 1000),
        failedTransfers: outcome.failed + unfinished,
        nonceGaps: gaps,
      },
      details: {
        wallMs,
        confirmed: mined.length,
        failed: outcome.failed,
        unfinishedAtDeadline: unfinished,
        ...(unfinished > 0 ? { atDeadline: await whereRunsStand(pool) } : {}),
      },
    };
  } finally {
    await chain.close();
  }
}

/** The mined hash of every confirmed transfer, with its chain and signer. */
async function minedHashes(pool: Pool): Promise<{ chainId: number; signerId: string; hash: Hex }[]> {
  const { rows } = await pool.query<{ chain_id: string; signer_id: string; hash: Hex }>(
    `SELECT input->>'chainId' AS chain_id, input->>'signerId' AS signer_id, output->>'hash' AS hash
     FROM executions WHERE status = 'completed' AND output->>'verdict' = 'confirmed'`,
  );
  return rows.map((r) => ({ chainId: Number(r.chain_id), signerId: r.signer_id, hash: r.hash }));
}

/**
 * Senders whose mined transfers on a chain do not carry exactly the nonces 0…perSender−1, or whose
 * account nonce on that chain moved past them (a transaction mined that no transfer reports).
 */
async function nonceGaps(
  urls: string[],
  perSender: number,
  senders: { chain: number; hashes: Hex[] }[],
): Promise<number> {
  const clients = urls.map((url) => createPublicClient({ transport: http(url) }));
  let gaps = 0;
  for (const { chain, hashes } of senders) {
    const client = clients[chain];
    if (!client) throw new Error(`no client for chain ${chain}`);
    const txs = await Promise.all(hashes.map((hash) => client.getTransaction({ hash })));
    const nonces = txs.map((t) => t.nonce).sort((a, b) => a - b);
    const from = txs[0]?.from;
    const count = from ? await client.getTransactionCount({ address: from }) : 0;
    const contiguous = nonces.length === perSender && nonces.every((n, i) => n === i) && count === perSender;
    if (!contiguous) gaps++;
  }
  return gaps;
}

/**
 * Where unfinished runs stand when the deadline passed: how many per status and first wait kind,
 * with their mean journal length and turns, so a stall names the wait it is stuck in.
 */
async function whereRunsStand(
  pool: Pool,
): Promise<Record<string, { runs: number; journal: number; turns: number }>> {
  const { rows } = await pool.query<{ state: string; runs: string; journal: string; turns: string }>(
    `SELECT e.status::text || coalesce(':' || (e.waiting_for->0->>'kind'), '') AS state, count(*) AS runs,
            round(avg((SELECT count(*) FROM journal_entries j WHERE j.execution_id = e.id)), 1) AS journal,
            round(avg(e.turn), 1) AS turns
       FROM executions e WHERE e.status NOT IN ('completed', 'failed') GROUP BY 1 ORDER BY 2 DESC`,
  );
  return Object.fromEntries(
    rows.map((r) => [r.state, { runs: Number(r.runs), journal: Number(r.journal), turns: Number(r.turns) }]),
  );
}

/** Waits until `count` executions are terminal (PostgreSQL's status), checking every 50 ms, or `deadline`. */
async function settled(
  pool: Pool,
  count: number,
  deadline: number,
): Promise<{ completed: number; failed: number }> {
  for (;;) {
    const { rows } = await pool.query<{ completed: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE status = 'completed') AS completed,
              count(*) FILTER (WHERE status = 'failed') AS failed FROM executions`,
    );
    const completed = Number(rows[0]?.completed ?? 0);
    const failed = Number(rows[0]?.failed ?? 0);
    if (completed + failed >= count || nowMs() >= deadline) return { completed, failed };
    await sleep(50);
  }
}

import { existsSync } from "node:fs";
import path from "node:path";
import type { PoolClient } from "pg";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  chainTransaction,
  chainTransactionVersions,
} from "../../src/chain/lifecycle/transaction-workflow.js";
import { lockSenderNonces } from "../../src/chain/store/pg-nonce-reservations.js";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { PgWaitProbe } from "../../src/store/pg-wait-probe.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type TestProcess, waitUntil } from "../support/processes.js";
import { type CrashWorld, startCrashWorld } from "./support/crash-world.js";

/**
 * Lifecycle version 6 parks a run while its nonce reservation queues (docs/chains.md, "A queued
 * reservation parks its run"): the turn ends after the entity command is committed, and the grant
 * reaches the run as a signal stored in the transaction that grants it. Real runner processes with
 * three turn slots; the test holds a sender's reservation lock (the lock every grant of the sender
 * takes) to keep its reservations queued. Every case ends with every transfer confirmed, one mined
 * transaction per intent and the sender's nonces contiguous.
 */

const SLOTS = 3;
let world: CrashWorld;
const hot = privateKeyToAccount(ANVIL_KEYS[1]).address;
const other = privateKeyToAccount(ANVIL_KEYS[4]).address;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;
const OTHER_KEY_ENV = "PARK_OTHER_SIGNER_KEY";

beforeAll(async () => {
  world = await startCrashWorld({
    file: import.meta.url,
    workflows: [...chainTransactionVersions],
    config: () => ({
      durable: {
        runnerConcurrency: SLOTS,
        lock: { lockDurationMs: 1_000, stalledIntervalMs: 500 },
        sweep: { intervalMs: 500, graceMs: 1_000 },
        // Each claim loop that takes a held sender's reservation waits on its lock: more loops than
        // held reservations leave some for the other sender.
        keyed: { concurrency: SLOTS * 3 + 3 },
      },
      signers: [
        { id: "hot", kind: "local", orgId: "acme", privateKey: { env: "CRASH_SIGNER_KEY" } },
        { id: "other", kind: "local", orgId: "acme", privateKey: { env: OTHER_KEY_ENV } },
      ],
    }),
  });
});

let runner: TestProcess | undefined;
let lock: PoolClient | undefined;
/** The transfers a case started: a case that failed midway lets them finish before the next one reads nonces. */
let started: string[] = [];

afterEach(async () => {
  await releaseLock();
  if (runner) await settled(started).catch(() => undefined);
  started = [];
  await runner?.kill();
  runner = undefined;
});

afterAll(async () => {
  await world?.stop();
});

function startRunner(env: Record<string, string> = {}): Promise<TestProcess> {
  return world.startRunner("chain-runner", "test/fixtures/chain-runner-process.ts", {
    [OTHER_KEY_ENV]: ANVIL_KEYS[4] as string,
    ...env,
  });
}

/** Holds `sender`'s reservation lock in an open transaction: its reservations stay queued. */
async function holdLock(sender: string): Promise<void> {
  lock = await world.pool.connect();
  await lock.query("BEGIN");
  await lockSenderNonces(lock, world.anvil.chainId, sender);
}

async function releaseLock(): Promise<void> {
  if (!lock) return;
  await lock.query("ROLLBACK").catch(() => undefined);
  lock.release();
  lock = undefined;
}

async function transfers(signerId: string, count: number): Promise<string[]> {
  const ids = await Promise.all(
    Array.from({ length: count }, async () => {
      const { executionId } = await world.client.start({
        workflow: chainTransaction.name,
        input: { chainId: world.anvil.chainId, signerId, to: recipient, valueWei: "1" },
        orgId: "acme",
      });
      return executionId;
    }),
  );
  started.push(...ids);
  return ids;
}

/** Waits until every run of `ids` is parked on its queued reservation, and returns their views. */
function parked(ids: readonly string[]): Promise<ExecutionView[]> {
  let seen = "";
  return waitUntil(
    `${ids.length} runs parked on their queued reservations`,
    async () => {
      const views = await Promise.all(ids.map((id) => world.client.view(id)));
      seen = JSON.stringify(views.map((v) => [v.status, v.waitingFor?.[0]?.kind, v.progress?.stage]));
      return views.every(
        (v) =>
          v.status === "waiting" &&
          v.waitingFor?.[0]?.kind === "nonce" &&
          v.progress?.stage === "queued for a nonce",
      )
        ? views
        : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 100 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the runs (status, wait, stage): ${seen}`);
  });
}

function settled(ids: readonly string[]): Promise<ExecutionView[]> {
  let seen = "";
  return waitUntil(
    "every transfer settled",
    async () => {
      const views = await Promise.all(ids.map((id) => world.client.view(id)));
      seen = JSON.stringify(
        views.map((v) => [v.status, v.waitingFor?.[0]?.kind, v.progress?.stage, v.failure]),
      );
      return views.every((v) => v.status === "completed" || v.status === "failed") ? views : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the transfers (status, wait, stage, failure): ${seen}`);
  });
}

/**
 * Every transfer confirmed, each on its own reservation, one mined transaction per intent, and the
 * sender's nonces `first`, `first + 1`, ... with no gap.
 */
async function expectOnePerIntent(sender: string, first: number, views: readonly ExecutionView[]) {
  expect(views.map((v) => [v.status, (v.output as { verdict?: string } | null)?.verdict])).toEqual(
    views.map(() => ["completed", "confirmed"]),
  );
  const nonces = views.map((v) => (v.output as { nonce: number }).nonce).sort((a, b) => a - b);
  expect(nonces).toEqual(views.map((_, i) => first + i));
  expect(await world.anvil.public.getTransactionCount({ address: sender as Hex })).toBe(first + views.length);
  const hashes = new Set(views.map((v) => (v.output as { hash: string }).hash));
  expect(hashes.size).toBe(views.length);
  const { rows } = await world.pool.query<{ command_id: string; nonce: string }>(
    "SELECT command_id, nonce::text AS nonce FROM nonce_reservations WHERE command_id = ANY($1::text[])",
    [views.map((v) => v.id)],
  );
  expect(rows).toHaveLength(views.length);
}

describe("a queued nonce reservation parks its run", () => {
  it(`frees the turn slot: ${SLOTS * 3} queued reservations on ${SLOTS} slots, and another sender's transfers complete meanwhile`, async () => {
    runner = await startRunner();
    const first = await world.anvil.public.getTransactionCount({ address: hot });
    const otherFirst = await world.anvil.public.getTransactionCount({ address: other });
    await holdLock(hot);
    const ids = await transfers("hot", SLOTS * 3);
    const views = await parked(ids);
    expect(views[0]?.waitingFor?.[0]).toMatchObject({
      kind: "nonce",
      name: `reservation:${world.anvil.chainId}:${hot.toLowerCase()}`,
      details: {
        chainId: world.anvil.chainId,
        sender: hot,
        reason: expect.stringContaining("queued for a nonce"),
      },
    });
    // With every reservation of `hot` still queued, another sender's writes take the free slots.
    const others = await transfers("other", 2);
    await expectOnePerIntent(other, otherFirst, await settled(others));
    await releaseLock();
    await expectOnePerIntent(hot, first, await settled(ids));
  }, 300_000);

  it("kill -9 of the runner while reservations are parked: the next runner finishes them all", async () => {
    const doomed = await startRunner();
    const first = await world.anvil.public.getTransactionCount({ address: hot });
    await holdLock(hot);
    const ids = await transfers("hot", 8);
    await parked(ids);
    await doomed.kill();
    await releaseLock();
    runner = await startRunner();
    await expectOnePerIntent(hot, first, await settled(ids));
  }, 300_000);

  it("kill -9 between the grant's commit and the wake: the grant still reaches every run", async () => {
    const marker = path.join(world.dir, "crashed-before-nonce-wake");
    const doomed = await startRunner({ CRASH_BEFORE_NONCE_WAKE: marker });
    const first = await world.anvil.public.getTransactionCount({ address: hot });
    await holdLock(hot);
    const ids = await transfers("hot", 6);
    await parked(ids);
    await releaseLock();
    const exit = await doomed.exit;
    expect(exit.signal).toBe("SIGKILL");
    expect(existsSync(marker)).toBe(true);
    // Every granted run is one the sweep (and a park's second look) sees as ready to move: its
    // grant is a stored signal its wait names, though the wait shows as kind `nonce`.
    const { rows } = await world.pool.query<{ command_id: string }>(
      "SELECT command_id FROM keyed_commands WHERE entity = 'chain.nonce' AND status = 'done' AND command_id = ANY($1::text[])",
      [ids],
    );
    expect(rows.length).toBeGreaterThan(0);
    const probe = new PgWaitProbe(world.pool);
    for (const { command_id } of rows) expect(await probe.satisfiable(command_id)).toBe(true);
    runner = await startRunner();
    await expectOnePerIntent(hot, first, await settled(ids));
  }, 300_000);

  it("a replayed send (kill -9 before its checkpoint) takes no second nonce", async () => {
    const marker = path.join(world.dir, "crashed-nonce-send");
    const doomed = await startRunner({ CRASH_BEFORE_CHECKPOINT: "nonce.send:0", CRASH_MARKER: marker });
    const first = await world.anvil.public.getTransactionCount({ address: hot });
    const [id] = await transfers("hot", 1);
    const exit = await doomed.exit;
    expect(exit.signal).toBe("SIGKILL");
    runner = await startRunner();
    const views = await settled([id as string]);
    await expectOnePerIntent(hot, first, views);
    const { rows } = await world.pool.query(
      "SELECT command_id FROM keyed_commands WHERE entity = 'chain.nonce' AND command_id LIKE $1",
      [`${id}%`],
    );
    expect(rows).toHaveLength(1);
    const sends = (await world.client.journal(id as string)).filter((e) => e.name === "nonce.send:0");
    expect(sends).toHaveLength(1);
  }, 300_000);
});

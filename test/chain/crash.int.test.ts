import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { type Hex, keccak256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainTransaction } from "../../src/chain/lifecycle/transaction-workflow.js";
import type { ExecutionClient } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createExecutionClient } from "../../src/roles/create-execution-client.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { killAllProcesses, repoRoot, spawnProcess, waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/**
 * kill -9 of a real runner process between the work and the checkpoint of the signing and the
 * broadcast steps: the next runner finishes the intent with one nonce, one signed payload and one
 * transaction on the node.
 */

let anvil: Anvil;
let db: TestDatabase;
let pool: Pool;
let redis: Redis;
let client: ExecutionClient;
let closeClient: () => Promise<void>;
let env: Record<string, string>;
let dir: string;
const prefix = testRedisPrefix(import.meta.url);
const sender = privateKeyToAccount(ANVIL_KEYS[1]).address;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  anvil = await startAnvil();
  db = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), "tenor-chain-crash-"));
  const configFile = path.join(dir, "config.yaml");
  writeFileSync(
    configFile,
    JSON.stringify({
      durable: {
        lock: { lockDurationMs: 1_000, stalledIntervalMs: 500 },
        sweep: { intervalMs: 500, graceMs: 1_000 },
      },
      chains: [
        { id: anvil.chainId, name: "anvil", rpcUrls: [anvil.url], confirmationWatcher: { intervalMs: 50 } },
      ],
      signers: [{ id: "hot", kind: "local", orgId: "acme", privateKey: { env: "CRASH_SIGNER_KEY" } }],
    }),
  );
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: configFile,
    CRASH_SIGNER_KEY: ANVIL_KEYS[1],
  };
  pool = createPgPool(db.url, { applicationName: "chain-crash-test", max: 4 });
  redis = createRedisConnection(redisUrl(), "producer");
  const side = createExecutionClient({
    pool,
    redis,
    prefix,
    registry: new WorkflowRegistry([chainTransaction]),
    logger: createLogger({ level: "error" }),
  });
  client = side.client;
  closeClient = side.close;
});

afterAll(async () => {
  await killAllProcesses();
  await closeClient?.().catch(() => undefined);
  await deleteRedisPrefix(prefix, redis).catch(() => undefined);
  redis?.disconnect();
  await pool?.end();
  await db?.drop();
  await anvil?.stop();
});

async function startRunner(crash?: { step: string; marker: string }) {
  const runner = spawnProcess(
    "chain-runner",
    process.execPath,
    ["--import", "tsx", path.join(repoRoot, "test/fixtures/chain-runner-process.ts")],
    {
      env: { ...env, ...(crash ? { CRASH_BEFORE_CHECKPOINT: crash.step, CRASH_MARKER: crash.marker } : {}) },
    },
  );
  await runner.waitFor(/"ready":true/, 60_000);
  return runner;
}

describe("a runner killed inside the lifecycle", () => {
  for (const step of ["sign:0", "broadcast:0"]) {
    it(`between ${step} and its checkpoint: one nonce, one signed payload, one transaction`, async () => {
      const countBefore = await anvil.public.getTransactionCount({ address: sender });
      const marker = path.join(dir, `crashed-${step.replace(":", "-")}`);
      const doomed = await startRunner({ step, marker });
      const { executionId: id } = await client.start({
        workflow: chainTransaction.name,
        input: { orgId: "acme", chainId: anvil.chainId, signerId: "hot", to: recipient, valueWei: "9" },
        orgId: "acme",
      });
      const exit = await doomed.exit;
      expect(exit.signal).toBe("SIGKILL");
      const survivor = await startRunner();
      const view = await waitUntil(
        "the intent to settle",
        async () => {
          const v = await client.view(id);
          return v.status === "completed" || v.status === "failed" ? v : undefined;
        },
        { timeoutMs: 60_000 },
      );
      await survivor.kill();
      expect(view.status, JSON.stringify(view)).toBe("completed");
      const journal = await client.journal(id);
      const signs = journal.filter((e) => e.name.startsWith("sign:"));
      expect(signs.map((e) => e.name)).toEqual(["sign:0"]);
      const raw = (signs[0]!.result as { raw: Hex }).raw;
      expect(view.output).toMatchObject({ verdict: "confirmed", hash: keccak256(raw), nonce: countBefore });
      const { rows } = await pool.query("SELECT nonce FROM nonce_reservations WHERE command_id = $1", [id]);
      expect(rows).toHaveLength(1);
      expect(await anvil.public.getTransactionCount({ address: sender })).toBe(countBefore + 1);
    }, 120_000);
  }
});

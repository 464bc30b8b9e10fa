import path from "node:path";
import type { Pool } from "pg";
import { type Hex, keccak256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chainTransaction,
  chainTransactionVersions,
} from "../../src/chain/lifecycle/transaction-workflow.js";
import type { ExecutionClient } from "../../src/engine/execution-client.js";
import { ANVIL_KEYS, type Anvil } from "../support/anvil.js";
import { waitUntil } from "../support/processes.js";
import { type CrashWorld, startCrashWorld } from "./support/crash-world.js";

/**
 * kill -9 of a real runner process between the work and the checkpoint of the signing and the
 * broadcast steps: the next runner finishes the intent with one nonce, one signed payload and one
 * transaction on the node.
 */

let world: CrashWorld;
let anvil: Anvil;
let pool: Pool;
let client: ExecutionClient;
let dir: string;
const sender = privateKeyToAccount(ANVIL_KEYS[1]).address;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startCrashWorld({ file: import.meta.url, workflows: [...chainTransactionVersions] });
  ({ anvil, pool, client, dir } = world);
});

afterAll(async () => {
  await world?.stop();
});

function startRunner(crash?: { step: string; marker: string }) {
  return world.startRunner(
    "chain-runner",
    "test/fixtures/chain-runner-process.ts",
    crash ? { CRASH_BEFORE_CHECKPOINT: crash.step, CRASH_MARKER: crash.marker } : {},
  );
}

describe("a runner killed inside the lifecycle", () => {
  for (const step of ["sign:0", "broadcast:0"]) {
    it(`between ${step} and its checkpoint: one nonce, one signed payload, one transaction`, async () => {
      const countBefore = await anvil.public.getTransactionCount({ address: sender });
      const marker = path.join(dir, `crashed-${step.replace(":", "-")}`);
      const doomed = await startRunner({ step, marker });
      const { executionId: id } = await client.start({
        workflow: chainTransaction.name,
        input: { chainId: anvil.chainId, signerId: "hot", to: recipient, valueWei: "9" },
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

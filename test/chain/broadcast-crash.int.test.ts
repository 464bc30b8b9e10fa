import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chainTransaction,
  chainTransactionVersions,
} from "../../src/chain/lifecycle/transaction-workflow.js";
import type { ExecutionView } from "../../src/engine/execution-client.js";
import { ANVIL_KEYS } from "../support/anvil.js";
import { type TestProcess, waitUntil } from "../support/processes.js";
import { type RpcAction, type RpcProxy, startRpcProxy } from "../support/rpc-proxy.js";
import { type CrashWorld, startCrashWorld } from "./support/crash-world.js";

/**
 * kill -9 of a real runner process while its `sendRawTransaction` is in flight (held open by the
 * JSON-RPC fault proxy, after or before the node took the bytes): the runner that takes the intent
 * over confirms it on the same nonce with the same signed payload, and the sender's next write
 * mines. No nonce is lost to the killed call.
 */

let world: CrashWorld;
let proxy: RpcProxy;
const sender = privateKeyToAccount(ANVIL_KEYS[1]).address;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startCrashWorld({
    file: import.meta.url,
    workflows: [...chainTransactionVersions],
    config: async (anvil) => {
      proxy = await startRpcProxy(anvil.url);
      return {
        chains: [
          { id: anvil.chainId, name: "anvil", rpcUrls: [proxy.url], confirmationWatcher: { intervalMs: 50 } },
        ],
      };
    },
  });
});

afterAll(async () => {
  await world?.stop();
  await proxy?.stop();
});

async function transfer(valueWei: string): Promise<string> {
  const { executionId } = await world.client.start({
    workflow: chainTransaction.name,
    input: { chainId: world.anvil.chainId, signerId: "hot", to: recipient, valueWei },
    orgId: "acme",
  });
  return executionId;
}

function settled(id: string): Promise<ExecutionView> {
  return waitUntil(
    "the intent to settle",
    async () => {
      const v = await world.client.view(id);
      return v.status === "completed" || v.status === "failed" ? v : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

const CASES: { name: string; action: RpcAction }[] = [
  { name: "after the node took the bytes", action: { forward: true, answer: { hang: true } } },
  { name: "before the node saw the bytes", action: { hang: true } },
];

/** The one live runner: each case kills it mid-call and leaves its successor running. */
let runner: TestProcess | undefined;
const startRunner = () => world.startRunner("chain-runner", "test/fixtures/chain-runner-process.ts");

describe("a runner killed during sendRawTransaction", () => {
  for (const c of CASES) {
    it(`${c.name}: the next runner confirms on the same nonce, and the sender's next write mines`, async () => {
      const before = await world.anvil.public.getTransactionCount({ address: sender });
      const rule = proxy.on("eth_sendRawTransaction", c.action, { times: 1 });
      const doomed = runner ?? (await startRunner());
      const id = await transfer("31");
      await waitUntil("the send to be in flight", () => rule.taken === 1, { timeoutMs: 30_000 });
      await doomed.kill();
      runner = await startRunner();

      const view = await settled(id);
      expect(view.status, JSON.stringify(view.failure)).toBe("completed");
      expect(view.output).toMatchObject({ verdict: "confirmed", nonce: before, attempts: 1 });
      const journal = await world.client.journal(id);
      const signs = journal.filter((e) => e.name.startsWith("sign:"));
      expect(signs.map((e) => e.name)).toEqual(["sign:0"]);
      expect((view.output as { hash: Hex }).hash).toBe((signs[0]!.result as { hash: Hex }).hash);
      expect(await world.anvil.public.getTransactionCount({ address: sender })).toBe(before + 1);

      const next = await settled(await transfer("32"));
      expect(next.output).toMatchObject({ verdict: "confirmed", nonce: before + 1 });
      expect(await world.anvil.public.getTransactionCount({ address: sender })).toBe(before + 2);
    }, 120_000);
  }
});

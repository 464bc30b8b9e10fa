import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANVIL_KEYS } from "../support/anvil.js";
import type { RpcAction } from "../support/rpc-proxy.js";
import { type ChainWorld, startChainWorld } from "./support/chain-world.js";

/**
 * A `sendRawTransaction` that fails never costs the sender a nonce (viem's and ethers' in-process
 * nonce managers keep or skip one when a send fails: wevm/viem#4364, ethers.js#972). Each fault is
 * produced by the JSON-RPC fault proxy between the lifecycle and a real anvil: the intent still
 * confirms on its reserved nonce with its one signed payload, the sender's nonces stay contiguous,
 * and the next write of the same sender mines. The runner killed mid-call is in
 * broadcast-crash.int.test.ts.
 */

let world: ChainWorld;
const recipient = privateKeyToAccount(ANVIL_KEYS[3]).address;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    rpcProxy: true,
    // A hung call gives up after 500 ms (and viem tries it once more), not the default 10 s.
    chain: { rpcTimeoutMs: 500 },
  });
});
afterAll(async () => {
  await world?.stop();
});

const SERVER_ERROR = { error: { code: -32000, message: "upstream connect error or disconnect" } };

const FAULTS: { name: string; action: RpcAction; times: number }[] = [
  {
    name: "the node took it, the caller got an error",
    action: { forward: true, answer: SERVER_ERROR },
    times: 1,
  },
  {
    name: "the node took it, the answer never came (timeout)",
    action: { forward: true, answer: { hang: true } },
    times: 1,
  },
  // Twice: the step's retry (which first asks the node for the hash) hangs again before one goes through.
  { name: "the call hung before the node saw it", action: { hang: true }, times: 2 },
  { name: "the node was unavailable (HTTP 503) before it saw it", action: { httpStatus: 503 }, times: 2 },
];

/** Sends one transfer from `hot` and checks it settled on exactly the sender's next nonce, once. */
async function sendsOnNextNonce(valueWei: string): Promise<string> {
  const before = await world.anvil.public.getTransactionCount({ address: world.hot });
  const id = await world.send({ to: recipient, valueWei });
  const view = await world.settled(id);
  expect(view.status, JSON.stringify(view.failure)).toBe("completed");
  expect(view.output).toMatchObject({ verdict: "confirmed", nonce: before, attempts: 1 });
  const journal = await world.engine.client.journal(id);
  const signed = journal.filter((e) => e.name.startsWith("sign:"));
  expect(signed.map((e) => e.name)).toEqual(["sign:0"]);
  expect((view.output as { hash: Hex }).hash).toBe((signed[0]!.result as { hash: Hex }).hash);
  const { rows } = await world.engine.pool.query(
    "SELECT nonce::int AS nonce FROM nonce_reservations WHERE command_id = $1",
    [id],
  );
  expect(rows).toEqual([{ nonce: before }]);
  // One transaction of the intent mined: the sender's count moved by exactly one.
  expect(await world.anvil.public.getTransactionCount({ address: world.hot })).toBe(before + 1);
  return id;
}

describe("a failed sendRawTransaction leaves no nonce gap", () => {
  for (const fault of FAULTS) {
    it(`${fault.name}: the intent confirms on its nonce and the next write mines`, async () => {
      const proxy = world.proxy!;
      const rule = proxy.on("eth_sendRawTransaction", fault.action, { times: fault.times });
      try {
        await sendsOnNextNonce("21");
        expect(rule.taken).toBe(fault.times);
      } finally {
        rule.remove();
      }
      // The sender is not stuck behind anything: its next write takes the next nonce and mines.
      await sendsOnNextNonce("22");
    });
  }
});

import { createPublicClient, createWalletClient, getAddress, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntryPointDeposits, EntryPointReference } from "../../src/chain/contracts/artifacts.js";
import { assertResolvedEntryPoint, resolveEntryPoint } from "../../src/chain/entry-point-resolver.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../support/anvil.js";
import { freePort } from "../support/processes.js";

let anvil: Anvil;
let entryPoint: `0x${string}`;
let reference: `0x${string}`;

beforeAll(async () => {
  anvil = await startAnvil();
  const wallet = createWalletClient({
    account: privateKeyToAccount(ANVIL_KEYS[0]),
    chain: foundry,
    transport: http(anvil.url),
  });
  const deployed = async (hash: `0x${string}`) =>
    (await anvil.public.waitForTransactionReceipt({ hash })).contractAddress as `0x${string}`;
  entryPoint = await deployed(
    await wallet.deployContract({ abi: EntryPointDeposits.abi, bytecode: EntryPointDeposits.bytecode }),
  );
  reference = await deployed(
    await wallet.deployContract({
      abi: EntryPointReference.abi,
      bytecode: EntryPointReference.bytecode,
      args: [entryPoint],
    }),
  );
});
afterAll(async () => {
  await anvil?.stop();
});

describe("EntryPoint resolution", () => {
  it("follows a reference to its target and leaves a plain EntryPoint or an account unchanged", async () => {
    expect(await resolveEntryPoint(anvil.public, reference)).toBe(getAddress(entryPoint));
    expect(await resolveEntryPoint(anvil.public, entryPoint)).toBe(getAddress(entryPoint));
    const account = privateKeyToAccount(ANVIL_KEYS[4]).address;
    expect(await resolveEntryPoint(anvil.public, account)).toBe(account);
  });

  it("fails retryably on a network failure instead of passing the configured address through", async () => {
    const dead = createPublicClient({
      chain: foundry,
      transport: http(`http://127.0.0.1:${await freePort()}`, { retryCount: 0 }),
    }) as PublicClient;
    await expect(resolveEntryPoint(dead, reference)).rejects.toMatchObject({
      code: "ENTRYPOINT_UNRESOLVED",
      retryable: true,
    });
  });

  it("refuses a submission naming the configured reference address", () => {
    expect(() => assertResolvedEntryPoint(reference, entryPoint, reference)).toThrow(
      expect.objectContaining({ code: "ENTRYPOINT_NOT_RESOLVED_ADDRESS" }),
    );
    expect(() => assertResolvedEntryPoint(entryPoint, entryPoint, reference)).not.toThrow();
  });
});

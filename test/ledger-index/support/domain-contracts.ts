import { fileURLToPath } from "node:url";
import type pg from "pg";
import { type Abi, type Address, encodeFunctionData, type Hex, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { compileContracts } from "../../../scripts/contracts/compile-contracts.js";
import { ANVIL_KEYS, type Anvil } from "../../support/anvil.js";
import { deployerWallet } from "./ledger-world.js";

/**
 * Test-only contracts emitting exactly the price-feed, price-resolver and system-settings events
 * (test/ledger-index/fixtures), compiled with the project's solc-js settings and deployed with viem.
 */
let compiled: ReturnType<typeof compileContracts> | undefined;
function artifact(name: "FixturePriceFeed" | "FixturePriceResolver" | "FixtureSystemSettings") {
  compiled ??= compileContracts(fileURLToPath(new URL("../fixtures", import.meta.url)));
  const found = compiled[name];
  if (!found) throw new Error(`fixture contract ${name} did not compile`);
  return { abi: found.abi as Abi, bytecode: found.bytecode };
}

const account = privateKeyToAccount(ANVIL_KEYS[0]);
/** The fixtures' deployer and caller (anvil account 0). */
export const OPERATOR = account.address;

async function deploy(anvil: Anvil, name: Parameters<typeof artifact>[0], args: unknown[] = []) {
  const { abi, bytecode } = artifact(name);
  const hash = await deployerWallet(anvil).deployContract({
    abi,
    bytecode,
    args,
    account,
    chain: { ...foundry, id: anvil.chainId },
  });
  const receipt = await anvil.public.waitForTransactionReceipt({ hash });
  return {
    address: (receipt.contractAddress as Address).toLowerCase() as Address,
    block: receipt.blockNumber,
  };
}

export const deployFeed = (anvil: Anvil, asset: Address, decimals = 8) =>
  deploy(anvil, "FixturePriceFeed", [asset, OPERATOR, decimals]);
export const deployResolver = (anvil: Anvil) => deploy(anvil, "FixturePriceResolver");
export const deploySettings = (anvil: Anvil) => deploy(anvil, "FixtureSystemSettings");

/** Calldata of one fixture call (also what an `anvil_reorg` branch transaction carries). */
export function fixtureCall(
  call:
    | { fn: "submit"; answer: bigint; updatedAt: bigint }
    | { fn: "setBound"; asset: Address; feed: Address; maxAge: bigint }
    | { fn: "set"; key: string; value: bigint },
): Hex {
  switch (call.fn) {
    case "submit":
      return encodeFunctionData({
        abi: artifact("FixturePriceFeed").abi,
        functionName: "submit",
        args: [call.answer, call.updatedAt],
      });
    case "setBound":
      return encodeFunctionData({
        abi: artifact("FixturePriceResolver").abi,
        functionName: "setBound",
        args: [call.asset, call.feed, call.maxAge],
      });
    case "set":
      return encodeFunctionData({
        abi: artifact("FixtureSystemSettings").abi,
        functionName: "set",
        args: [settingKey(call.key), toHex(call.value, { size: 32 })],
      });
  }
}

/** A setting's bytes32 key: the name's UTF-8 bytes, right-padded. */
export function settingKey(name: string): Hex {
  return toHex(name, { size: 32 });
}

/** Sends one fixture call to `to` and waits for its receipt (one block each with automine). */
export async function send(anvil: Anvil, to: Address, data: Hex): Promise<bigint> {
  const hash = await deployerWallet(anvil).sendTransaction({
    to,
    data,
    account,
    chain: { ...foundry, id: anvil.chainId },
  });
  return (await anvil.public.waitForTransactionReceipt({ hash })).blockNumber;
}

/** The contracts of one organisation's price and settings world. */
export interface DomainContracts {
  asset: Address;
  feed: { address: Address; block: bigint };
  resolver: { address: Address; block: bigint };
  settings: { address: Address; block: bigint };
}

/** Deploys a feed for `asset`, a resolver and a settings contract. */
export async function deployDomain(anvil: Anvil, asset: Address): Promise<DomainContracts> {
  return {
    asset,
    feed: await deployFeed(anvil, asset),
    resolver: await deployResolver(anvil),
    settings: await deploySettings(anvil),
  };
}

/**
 * `count` blocks of activity, one call each, cycling: an observation, a setting change, and
 * (every third) a staleness bound; values vary with `salt` so a lost or doubled row shows.
 */
export async function domainActivity(anvil: Anvil, c: DomainContracts, count: number, salt = 0) {
  for (let i = 0; i < count; i++) {
    const n = BigInt(1 + i + salt * 1000);
    if (i % 3 === 0)
      await send(
        anvil,
        c.feed.address,
        fixtureCall({ fn: "submit", answer: n * 100n, updatedAt: 1_700_000_000n + n }),
      );
    else if (i % 3 === 1)
      await send(anvil, c.settings.address, fixtureCall({ fn: "set", key: `k${i % 2}`, value: n }));
    else
      await send(
        anvil,
        c.resolver.address,
        fixtureCall({ fn: "setBound", asset: c.asset, feed: c.feed.address, maxAge: 60n + n }),
      );
  }
}

/** Every domain row of the chain, in key order: what "the same index" means for them. */
export async function dumpDomain(pool: pg.Pool, chainId: number) {
  const rows = async (table: string) =>
    (
      await pool.query(
        `SELECT to_jsonb(t) - 'chain_id' AS row FROM ${table} t WHERE chain_id = $1 ORDER BY block_number, log_index`,
        [chainId],
      )
    ).rows.map((r) => r.row);
  return {
    feeds: await rows("ledger_price_feeds"),
    observations: await rows("ledger_price_observations"),
    bounds: await rows("ledger_staleness_bounds"),
    settings: await rows("ledger_setting_changes"),
  };
}

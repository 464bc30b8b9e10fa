import type { Address } from "viem";
import type { ShardFence } from "../../../src/ownership/store/shard-fence.js";
import { type Anvil, startAnvil } from "../../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";
import { type RpcProxy, startRpcProxy } from "../../support/rpc-proxy.js";
import { deployToken, type LedgerDriver, ledgerDriver, mintSome, takeChainShard } from "./ledger-world.js";

export interface IndexedTokenOptions {
  settings: { batchBlocks: number; rangeBlocks: number; depth: number };
  /** Mint transactions sent after the deploy, before the index starts. */
  mints: number;
  /** Owner name of the chain's shard fence. */
  shardOwner: string;
  /** Put the JSON-RPC fault proxy between the index and the node. */
  proxy?: boolean;
  /** Run the index to the head before the tests start. */
  caughtUp?: boolean;
}

export interface IndexedToken {
  anvil: Anvil;
  db: TestDatabase;
  /** Present when the options asked for the fault proxy. */
  proxy: RpcProxy | undefined;
  token: Address;
  deployedAt: bigint;
  driver: LedgerDriver;
  fence: ShardFence;
  stop(): Promise<void>;
}

/**
 * One test token on a fresh anvil, in the scope of organisation `acme` from its deploy height, with
 * some mints, indexed by hand in a database of its own: the world of the ledger tail's fault tests.
 */
export async function startIndexedToken(options: IndexedTokenOptions): Promise<IndexedToken> {
  const [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  const proxy = options.proxy ? await startRpcProxy(anvil.url) : undefined;
  const { token, block: deployedAt } = await deployToken(anvil);
  const driver = ledgerDriver(db.pool, anvil, options.settings, proxy?.url);
  await driver.scope.add({
    chainId: anvil.chainId,
    orgId: "acme",
    address: token,
    kind: "erc20",
    fromHeight: deployedAt,
  });
  await mintSome(anvil, token, options.mints);
  const fence = await takeChainShard(db.pool, anvil.chainId, options.shardOwner);
  if (options.caughtUp) await driver.catchUp(fence);
  return {
    anvil,
    db,
    proxy,
    token,
    deployedAt,
    driver,
    fence,
    async stop() {
      await proxy?.stop();
      await anvil.stop();
      await db.drop();
    },
  };
}

import { entryCommand } from "../../support/fast-entry.js";
import { spawnProcess, type TestProcess } from "../../support/processes.js";

export interface IndexerProcessOptions {
  databaseUrl: string;
  rpcUrl: string;
  chainId: number;
  replicaId: string;
  /** More environment of test/fixtures/ledger-indexer-process.ts (DEPTH, LIVENESS_MS, ...). */
  env?: Record<string, string>;
}

/**
 * A Ledger Index replica as a real process (test/fixtures/ledger-indexer-process.ts: the production
 * indexer over one chain and one shard), polling every 50 ms.
 */
export function spawnIndexerProcess(options: IndexerProcessOptions): TestProcess {
  return spawnProcess(options.replicaId, ...entryCommand("test/fixtures/ledger-indexer-process.ts"), {
    env: {
      DATABASE_URL: options.databaseUrl,
      RPC_URL: options.rpcUrl,
      CHAIN_ID: String(options.chainId),
      REPLICA_ID: options.replicaId,
      SHARD_COUNT: "1",
      POLL_MS: "50",
      ...options.env,
    },
  });
}

/**
 * The one indexer of an API test: finality depth 1, and a long liveness window so that it keeps
 * its shard through a SIGSTOP. Resolves once it is ready.
 */
export async function startSoleIndexer(world: {
  engine: { db: { url: string } };
  anvil: { url: string; chainId: number };
}): Promise<TestProcess> {
  const indexer = spawnIndexerProcess({
    databaseUrl: world.engine.db.url,
    rpcUrl: world.anvil.url,
    chainId: world.anvil.chainId,
    replicaId: "indexer-1",
    env: { DEPTH: "1", LIVENESS_MS: "120000" },
  });
  await indexer.waitFor(/"event":"ready"/, 60_000);
  return indexer;
}

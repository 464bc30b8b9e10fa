import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { type Address, createWalletClient, type Hex, http, keccak256, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { ALL_WORKFLOWS } from "../../../../flows/index.js";
import { TestToken } from "../../../../src/chain/contracts/artifacts.js";
import { ChainClients } from "../../../../src/chain/rpc-clients.js";
import { loadConfig } from "../../../../src/config/load-config.js";
import type { TenorConfig } from "../../../../src/config/schema.js";
import { WorkflowRegistry } from "../../../../src/engine/registry.js";
import { chainShardKey, LedgerIndexer } from "../../../../src/ledger-index/ledger-indexer.js";
import { createLogger, type Logger } from "../../../../src/observability/logger.js";
import { shardOf } from "../../../../src/ownership/shard-map.js";
import { bumpOwnerEpoch } from "../../../../src/ownership/store/shard-fence.js";
import { ledgerIndexStores } from "../../../../src/roles/ledger-index-stores.js";
import { createPlatformApi } from "../../../../src/roles/platform-api.js";
import { PgApiKeys } from "../../../../src/store/pg-api-keys.js";
import { createRedisConnection } from "../../../../src/transport/redis-connection.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../../support/anvil.js";
import {
  type HttpClient,
  httpClient,
  issueTestKeys,
  type TestPrincipal,
} from "../../../support/api-client.js";
import { writeTestConfig } from "../../../support/config-file.js";
import type { TestDatabase } from "../../../support/database.js";
import { freePort, killAllProcesses, waitUntil } from "../../../support/processes.js";
import { type RoleProcess, roleReady, spawnRole } from "../../../support/role-process.js";
import { type RpcProxy, startRpcProxy } from "../../../support/rpc-proxy.js";
import { createTestStores } from "../../../support/test-stores.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/** The people of organisation `acme` the tests act as, each a person of their own. */
const PEOPLE = {
  integrator: { org: "acme", role: "integrator" },
  approver: { org: "acme", role: "approver" },
  approver2: { org: "acme", role: "approver" },
} as const satisfies Record<string, TestPrincipal>;
export type Person = keyof typeof PEOPLE;

/** Anvil key of the organisation's paying wallet (signer `payer`). */
const PAYER_KEY = ANVIL_KEYS[4];
/** Anvil key of a second paying wallet (signer `payer-2`), with a Distributor of its own. */
const PAYER2_KEY = ANVIL_KEYS[3];

/**
 * The deployment on one anvil, on a database and Redis prefix of the file's own: the real runner
 * role (workers/main.ts, the release's application) as a child process, the one a test kills;
 * the Platform API and the Ledger Index's live tail and catch-up in this process; the signers
 * `payer` and `payer-2` of organisation `acme`, and API keys of its people.
 */
export interface CorporateWorld {
  /** Resolves once the first runner is ready. */
  ready: Promise<void>;
  anvil: Anvil;
  db: TestDatabase;
  payer: Address;
  payer2: Address;
  /** The fault proxy the runner reaches anvil through, when the world was started with one. */
  rpcProxy?: RpcProxy;
  runner(): RoleProcess;
  /** Starts a runner (after the previous one was killed) and waits until it is ready. */
  startRunner(): Promise<RoleProcess>;
  call: HttpClient<Person>;
  /** Polls GET /v1/executions/{id} until `predicate` holds. */
  waitFor(id: string, predicate: (e: Json) => boolean, what: string, timeoutMs?: number): Promise<Json>;
  stop(): Promise<void>;
}

export async function startCorporateWorld(
  file: string,
  options: { rpcProxy?: boolean } = {},
): Promise<CorporateWorld> {
  const [anvil, stores] = await Promise.all([startAnvil(), createTestStores(file)]);
  // With `rpcProxy`, the configured node (the runner's, the indexer's) is the fault proxy in front of anvil.
  const rpcProxy = options.rpcProxy ? await startRpcProxy(anvil.url) : undefined;
  const { db, prefix } = stores;
  const configFile = writeTestConfig("corporate", {
    durable: {
      lock: { lockDurationMs: 1_000, stalledIntervalMs: 500 },
      sweep: { intervalMs: 500, graceMs: 1_000 },
      sharding: { shardCount: 4, refreshIntervalMs: 300, livenessWindowMs: 1500 },
    },
    api: { rateLimit: { max: 1_000_000, windowSeconds: 60 } },
    indexer: { pollIntervalMs: 100, batchBlocks: 50, rangeBlocks: 200, leaseMs: 5000 },
    chains: [
      {
        id: anvil.chainId,
        name: "anvil",
        rpcUrls: [rpcProxy?.url ?? anvil.url],
        finality: { depth: 1 },
        confirmationWatcher: { intervalMs: 50 },
      },
    ],
    signers: [
      { id: "payer", kind: "local", orgId: "acme", privateKey: { env: "CA_PAYER_KEY" } },
      { id: "payer-2", kind: "local", orgId: "acme", privateKey: { env: "CA_PAYER2_KEY" } },
    ],
  });
  const env = {
    ...stores.env,
    TENOR_CONFIG: configFile.file,
    TENOR_LOG_LEVEL: "warn",
    CA_PAYER_KEY: PAYER_KEY,
    CA_PAYER2_KEY: PAYER2_KEY,
  };
  const config = loadConfig({ env });
  const logger = createLogger({ level: "error" });
  const roles: RoleProcess[] = [];
  let runner: RoleProcess | undefined;
  const startRunner = async () => {
    const port = await freePort();
    const started = spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(port) });
    roles.push(started);
    runner = started;
    await roleReady("the runner ready", started, `http://127.0.0.1:${port}`);
    return started;
  };
  const booting = startRunner();
  // The Platform API and the Ledger Index run in this process (the runner is the process killed).
  const redis = createRedisConnection(config.redisUrl, "producer");
  const platform = createPlatformApi({
    settings: config.api,
    pool: db.pool,
    redis,
    prefix,
    registry: new WorkflowRegistry(ALL_WORKFLOWS),
    logger,
    readiness: {},
    health: { draining: false },
  });
  const server = platform.app.listen(0, "127.0.0.1");
  await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const indexer = await startIndexer(db, anvil, config, logger);
  // Seeding the chain can go on while the runner boots; `ready` says when it has.
  booting.catch(() => undefined);
  const { keys } = await issueTestKeys<Person>(new PgApiKeys(db.pool), PEOPLE);
  const call = httpClient(base, keys);
  return {
    ready: booting.then(() => undefined),
    anvil,
    db,
    payer: privateKeyToAccount(PAYER_KEY).address,
    payer2: privateKeyToAccount(PAYER2_KEY).address,
    ...(rpcProxy ? { rpcProxy } : {}),
    runner: () => runner as RoleProcess,
    startRunner,
    call,
    waitFor: (id, predicate, what, timeoutMs = 120_000) =>
      waitUntil(
        what,
        async () => {
          const { body } = await call("integrator", "GET", `/v1/executions/${id}`);
          if (body.status === "failed" && !predicate(body))
            throw new Error(`failed: ${JSON.stringify(body.failure ?? body)}`);
          return predicate(body) ? body : undefined;
        },
        { timeoutMs, intervalMs: 200 },
      ),
    async stop() {
      for (const role of roles) role.kill("SIGKILL");
      await Promise.all(roles.map((r) => r.exited));
      await killAllProcesses();
      await indexer.stop();
      await new Promise((resolve) => server.close(resolve));
      await platform.close();
      redis.disconnect();
      await stores.drop();
      await rpcProxy?.stop();
      await anvil.stop();
    },
  };
}

/** The token owner's wallet (anvil key 0): deploys and mints the test tokens. */
function ownerWallet(anvil: Anvil) {
  return createWalletClient({
    account: privateKeyToAccount(ANVIL_KEYS[0]),
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
}

/** Deploys a TestToken owned by anvil key 0; returns its lowercase address and deployment block. */
export async function deployTestToken(anvil: Anvil, symbol: string, decimals: number) {
  const hash = await ownerWallet(anvil).deployContract({
    abi: TestToken.abi,
    bytecode: TestToken.bytecode,
    args: [symbol, symbol, decimals],
  });
  const receipt = await anvil.public.waitForTransactionReceipt({ hash });
  return { token: (receipt.contractAddress as Address).toLowerCase() as Address, block: receipt.blockNumber };
}

/** Mints to many holders, 200 per transaction (one block each with automine). */
export async function mintMany(
  anvil: Anvil,
  token: Address,
  holders: readonly Address[],
  amounts: readonly bigint[],
) {
  const wallet = ownerWallet(anvil);
  for (let i = 0; i < holders.length; i += 200) {
    const hash = await wallet.writeContract({
      address: token,
      abi: TestToken.abi,
      functionName: "mintBatch",
      args: [holders.slice(i, i + 200), amounts.slice(i, i + 200)],
    });
    const receipt = await anvil.public.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`mintBatch ${i} reverted`);
  }
}

/** `count` distinct holder addresses, the same on every run (lowercase). */
export function holderAddresses(count: number): Address[] {
  return Array.from({ length: count }, (_, i) => `0x${keccak256(toHex(`holder:${i}`)).slice(26)}` as Address);
}

/** A transfer of `token` signed by anvil key `key` (sender must hold it). */
export async function transferFrom(anvil: Anvil, key: Hex, token: Address, to: Address, value: bigint) {
  const wallet = createWalletClient({
    account: privateKeyToAccount(key),
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
  const hash = await wallet.writeContract({
    address: token,
    abi: TestToken.abi,
    functionName: "transfer",
    args: [to, value],
  });
  return anvil.public.waitForTransactionReceipt({ hash });
}

/** The Ledger Index of the chain in this process: its live tail on the chain's shard, and catch-up. */
async function startIndexer(db: TestDatabase, anvil: Anvil, config: TenorConfig, logger: Logger) {
  const shardCount = config.durable.sharding.shardCount;
  const indexer = new LedgerIndexer({
    stores: ledgerIndexStores(db.pool),
    chains: new ChainClients(config),
    shardCount,
    settings: config.indexer,
    replicaId: "test-indexer",
    logger,
  });
  const shard = shardOf(chainShardKey(anvil.chainId), shardCount);
  const client = await db.pool.connect();
  const epoch = await bumpOwnerEpoch(client, "indexer", shard, "test-indexer", 2_000).finally(() =>
    client.release(),
  );
  const owned = new AbortController();
  indexer.work.start({ domain: "indexer", shard, epoch, signal: owned.signal });
  const catchUp = indexer.startCatchUp();
  return {
    async stop() {
      owned.abort();
      await indexer.work.stop(shard, "stopping");
      await catchUp.stop();
    },
  };
}

/** Puts `token` in organisation acme's index scope from `height` (as an admin's tracked contract). */
export async function trackAsset(world: CorporateWorld, token: Address, height: bigint): Promise<void> {
  await world.db.pool.query(
    "INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height) VALUES ($1, 'acme', $2, 'erc20', $3)",
    [world.anvil.chainId, token, height.toString()],
  );
}

/** What `holder` holds of `token`, read from the node. */
export function tokenBalance(anvil: Anvil, token: Address, holder: Address): Promise<bigint> {
  return anvil.public.readContract({
    address: token,
    abi: TestToken.abi,
    functionName: "balanceOf",
    args: [holder],
  });
}

/** Starts `corporate-action.distribute` as the integrator with `input`; returns the execution id. */
export async function startDistribution(
  world: CorporateWorld,
  input: Record<string, unknown>,
): Promise<string> {
  const res = await world.call(
    "integrator",
    "POST",
    "/v1/workflows/corporate-action.distribute/executions",
    input,
  );
  if (res.status !== 202)
    throw new Error(`the distribution was not accepted: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** The execution once its payout approval waits, and that wait. */
export async function payoutApprovalWait(
  world: CorporateWorld,
  id: string,
): Promise<{ execution: Json; wait: Json }> {
  const execution = await world.waitFor(
    id,
    (e) => e.status === "waiting" && e.waitingFor?.[0]?.kind === "approval",
    "the payout approval",
  );
  return { execution, wait: execution.waitingFor[0] };
}

/** One approver's vote on the payout of `id`; returns the vote's answer. */
export async function votePayout(
  world: CorporateWorld,
  id: string,
  person: "approver" | "approver2",
  decision: "approve" | "reject",
  paramsHash: string,
  reason?: string,
): Promise<Json> {
  const res = await world.call(person, "POST", `/v1/executions/${id}/approvals/payout`, {
    decision,
    paramsHash,
    ...(reason === undefined ? {} : { reason }),
  });
  if (res.status !== 202)
    throw new Error(`the vote was not accepted: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Waits for the payout approval and has both approvers approve the hash they were shown. */
export async function approvePayout(world: CorporateWorld, id: string): Promise<Json> {
  const { wait } = await payoutApprovalWait(world, id);
  for (const person of ["approver", "approver2"] as const) {
    await votePayout(world, id, person, "approve", wait.details.paramsHash);
  }
  return wait;
}

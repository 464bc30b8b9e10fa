import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Address, createWalletClient, type Hex, http, keccak256, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { issueApiKey } from "../../../../src/api/auth/api-key.js";
import { TestToken } from "../../../../src/chain/contracts/artifacts.js";
import { PgApiKeys } from "../../../../src/store/pg-api-keys.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../../../support/database.js";
import { freePort } from "../../../support/ports.js";
import { killAllProcesses, WaitAborted, waitUntil } from "../../../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../../../support/redis.js";
import { type RoleProcess, spawnRole } from "../../../support/role-process.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/** The people of organisation `acme` the tests act as, each a person of their own. */
const PEOPLE = { integrator: "integrator", approver: "approver", approver2: "approver" } as const;
export type Person = keyof typeof PEOPLE;

/** Anvil key of the organisation's paying wallet (signer `payer`). */
const PAYER_KEY = ANVIL_KEYS[4];

/**
 * The whole deployment on one anvil: the real api, runner and indexer roles (workers/main.ts, the
 * release's application) as child processes on a database and Redis prefix of the file's own, the
 * signer `payer` of organisation `acme`, and API keys of its people.
 */
export interface CorporateWorld {
  anvil: Anvil;
  db: TestDatabase;
  payer: Address;
  runner(): RoleProcess;
  /** Starts a runner (after the previous one was killed) and waits until it is ready. */
  startRunner(): Promise<RoleProcess>;
  call(person: Person, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  /** Polls GET /v1/executions/{id} until `predicate` holds. */
  waitFor(id: string, predicate: (e: Json) => boolean, what: string, timeoutMs?: number): Promise<Json>;
  stop(): Promise<void>;
}

export async function startCorporateWorld(file: string): Promise<CorporateWorld> {
  const [anvil, db] = await Promise.all([startAnvil(), createTestDatabase()]);
  const prefix = testRedisPrefix(file);
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-corporate-"));
  const configFile = path.join(dir, "config.json");
  writeFileSync(
    configFile,
    JSON.stringify({
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
          rpcUrls: [anvil.url],
          finality: { depth: 1 },
          confirmationWatcher: { intervalMs: 50 },
        },
      ],
      signers: [{ id: "payer", kind: "local", orgId: "acme", privateKey: { env: "CA_PAYER_KEY" } }],
    }),
  );
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: configFile,
    TENOR_LOG_LEVEL: "warn",
    CA_PAYER_KEY: PAYER_KEY,
  };
  const roles: RoleProcess[] = [];
  /** Starts a role and waits for its readiness; a role that exits first fails at once with its output. */
  const startRole = async (role: "api" | "runner" | "indexer", portVariable: string) => {
    const port = await freePort();
    const started = spawnRole({ ...env, DAPI_ROLE: role, [portVariable]: String(port) });
    roles.push(started);
    await waitUntil(
      `the ${role} ready`,
      async () => {
        if (started.child.exitCode !== null || started.child.signalCode !== null) {
          throw new WaitAborted(`the ${role} exited:\n${started.output()}`);
        }
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
      },
      { timeoutMs: 90_000 },
    );
    return { process: started, port };
  };
  // The api first: the first role records the shard count, the others read it.
  const apiPort = (await startRole("api", "TENOR_API_PORT")).port;
  let runner: RoleProcess | undefined;
  const startRunner = async () => {
    runner = (await startRole("runner", "TENOR_RUNNER_HEALTH_PORT")).process;
    return runner;
  };
  const base = `http://127.0.0.1:${apiPort}`;
  await Promise.all([startRole("indexer", "TENOR_INDEXER_HEALTH_PORT"), startRunner()]);
  const apiKeys = new PgApiKeys(db.pool);
  const keys = {} as Record<Person, string>;
  for (const [person, role] of Object.entries(PEOPLE) as [Person, "integrator" | "approver"][]) {
    keys[person] = (await issueApiKey(apiKeys, { orgId: "acme", role, subject: person, name: person })).key;
  }
  const call: CorporateWorld["call"] = async (person, method, urlPath, body) => {
    const res = await fetch(`${base}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${keys[person]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return {
    anvil,
    db,
    payer: privateKeyToAccount(PAYER_KEY).address,
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
      await deleteRedisPrefix(prefix).catch(() => undefined);
      await db.drop();
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

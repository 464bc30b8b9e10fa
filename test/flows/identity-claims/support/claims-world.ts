import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import request from "supertest";
import {
  type Address,
  createWalletClient,
  encodeDeployData,
  getAddress,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  stringToHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { claimBatch } from "../../../../flows/identity-claims/claim-batch.js";
import { issueApiKey } from "../../../../src/api/auth/api-key.js";
import type { ApiRole } from "../../../../src/auth/api-roles.js";
import { ClaimRegistry, TestToken } from "../../../../src/chain/contracts/artifacts.js";
import { chainTransactionVersions } from "../../../../src/chain/lifecycle/transaction-workflow.js";
import { loadConfig } from "../../../../src/config/load-config.js";
import { WorkflowRegistry } from "../../../../src/engine/registry.js";
import { createLogger } from "../../../../src/observability/logger.js";
import { createPlatformApi } from "../../../../src/roles/platform-api.js";
import { createPgPool } from "../../../../src/store/pg-pool.js";
import { createRedisConnection } from "../../../../src/transport/redis-connection.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../../../support/anvil.js";
import { createTestDatabase, type TestDatabase } from "../../../support/database.js";
import { killAllProcesses, repoRoot, spawnProcess, type TestProcess } from "../../../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../../../support/redis.js";

/**
 * One test file's world for `identity.claim-batch`: a real anvil, a database and Redis prefix of
 * its own, real runner processes (test/fixtures/chain-runner-process.ts) and the Platform API in this process
 * (supertest) with keys for organisation `acme` (whose signer `issuer` is anvil key 1) and
 * organisation `other`.
 */

/** Who holds a key: `acme` people, one of them with a second key, and someone of `other`. */
const PRINCIPALS = {
  integrator: { org: "acme", role: "integrator", subject: "ines@acme" },
  alice: { org: "acme", role: "approver", subject: "alice@acme" },
  aliceAgain: { org: "acme", role: "approver", subject: "alice@acme" },
  bob: { org: "acme", role: "approver", subject: "bob@acme" },
  /** The integrator's own approver key: nobody approves what they started. */
  integratorApprover: { org: "acme", role: "approver", subject: "ines@acme" },
  outsider: { org: "other", role: "integrator", subject: "olga@other" },
} as const satisfies Record<string, { org: string; role: ApiRole; subject: string }>;
export type Principal = keyof typeof PRINCIPALS;

/** The organisation's signer (anvil key 1), the registry's owner unless a test says otherwise. */
export const ISSUER = privateKeyToAccount(ANVIL_KEYS[1]).address;
/** Another issuer of the registry, writing directly: "someone else" adding claims. */
const OTHER_ISSUER_KEY = ANVIL_KEYS[5];
export const OTHER_ISSUER = privateKeyToAccount(OTHER_ISSUER_KEY).address;

export interface ClaimInputRow {
  subject: string;
  topic: string | number;
  data: string;
}

export interface ClaimsWorld {
  anvil: Anvil;
  db: TestDatabase;
  pool: Pool;
  dir: string;
  runners: TestProcess[];
  /** Starts a runner process, optionally killing itself once before the checkpoint of `crash`. */
  startRunner(crash?: { step: string; marker: string }): Promise<TestProcess>;
  as(principal: Principal): { get(url: string): request.Test; post(url: string): request.Test };
  /** Starts a batch through the API as `integrator`; returns the execution id. */
  startBatch(input: Record<string, unknown>, by?: Principal): Promise<string>;
  /** Waits until the batch waits for its approval; returns the wait's details. */
  approvalWait(id: string): Promise<{ params: Record<string, unknown>; paramsHash: string; quorum: number }>;
  vote(
    id: string,
    by: Principal,
    decision: "approve" | "reject",
    paramsHash: string,
    reason?: string,
  ): request.Test;
  /** Polls the execution as `by` (default `integrator`) until `predicate` holds. */
  view(
    id: string,
    predicate: (body: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs?: number,
    by?: Principal,
  ): Promise<Record<string, unknown>>;
  settled(id: string, timeoutMs?: number, by?: Principal): Promise<Record<string, unknown>>;
  /** Deploys a ClaimRegistry owned by `owner` (default ISSUER; then OTHER_ISSUER is allowed too), checksummed. */
  deployRegistry(owner?: Address): Promise<Address>;
  /** Deploys a contract that is not a ClaimRegistry (a TestToken). */
  deployToken(): Promise<Address>;
  /** Adds claims directly as OTHER_ISSUER (not through Tenor). */
  addDirectly(registry: Address, claims: readonly ClaimInputRow[]): Promise<void>;
  /** Every ClaimAdded the registry emitted, as `subject/topic` (lower case, decimal). */
  claimAddedEvents(registry: Address): Promise<string[]>;
  /** Lifecycle children the batch started. */
  writesOf(id: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startClaimsWorld(file: string): Promise<ClaimsWorld> {
  const anvil = await startAnvil();
  const db = await createTestDatabase();
  const prefix = testRedisPrefix(file);
  const dir = mkdtempSync(path.join(tmpdir(), "tenor-claims-"));
  const configFile = path.join(dir, "config.yaml");
  const chain = {
    id: anvil.chainId,
    name: "anvil",
    rpcUrls: [anvil.url],
    confirmationWatcher: { intervalMs: 50 },
  };
  writeFileSync(
    configFile,
    JSON.stringify({
      durable: {
        lock: { lockDurationMs: 1_000, stalledIntervalMs: 500 },
        sweep: { intervalMs: 500, graceMs: 1_000 },
      },
      chains: [chain],
      signers: [
        { id: "issuer", kind: "local", orgId: "acme", privateKey: { env: "CLAIMS_ISSUER_KEY" } },
        { id: "platform", kind: "local", privateKey: { env: "CLAIMS_PLATFORM_KEY" } },
      ],
      api: { maxPreferWaitSeconds: 5, rateLimit: { max: 1_000_000, windowSeconds: 60 } },
    }),
  );
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_CONFIG: configFile,
    CLAIMS_ISSUER_KEY: ANVIL_KEYS[1],
    CLAIMS_PLATFORM_KEY: ANVIL_KEYS[6],
  };
  const config = loadConfig({ env });
  const pool = createPgPool(db.url, { applicationName: "claims-test", max: 4 });
  const redis: Redis = createRedisConnection(redisUrl(), "producer");
  const api = createPlatformApi({
    settings: config.api,
    pool,
    redis,
    prefix,
    registry: new WorkflowRegistry([...chainTransactionVersions, claimBatch]),
    logger: createLogger({ level: "error" }),
    readiness: {},
    health: { draining: false },
    chainIds: [anvil.chainId],
  });
  const keys = {} as Record<Principal, string>;
  for (const [name, p] of Object.entries(PRINCIPALS) as [Principal, (typeof PRINCIPALS)[Principal]][]) {
    keys[name] = (await issueApiKey(api.keys, { orgId: p.org, role: p.role, name, subject: p.subject })).key;
  }
  const as: ClaimsWorld["as"] = (principal) => ({
    get: (url) => request(api.app).get(url).set("authorization", `Bearer ${keys[principal]}`),
    post: (url) => request(api.app).post(url).set("authorization", `Bearer ${keys[principal]}`),
  });
  const deployer = createWalletClient({
    account: privateKeyToAccount(ANVIL_KEYS[0]),
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
  const other = createWalletClient({
    account: privateKeyToAccount(OTHER_ISSUER_KEY),
    chain: { ...foundry, id: anvil.chainId },
    transport: http(anvil.url),
  });
  const runners: TestProcess[] = [];

  const view: ClaimsWorld["view"] = async (id, predicate, what, timeoutMs = 30_000, by = "integrator") => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await as(by).get(`/v1/executions/${id}`);
      if (res.status === 200 && predicate(res.body)) return res.body;
      if (Date.now() > deadline)
        throw new Error(`execution ${id} never reached ${what}: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  async function receiptOf(hash: Hex) {
    return anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }

  return {
    anvil,
    db,
    pool,
    dir,
    runners,
    async startRunner(crash) {
      const runner = spawnProcess(
        "claims-runner",
        process.execPath,
        ["--import", "tsx", path.join(repoRoot, "test/fixtures/chain-runner-process.ts")],
        {
          env: {
            ...env,
            ...(crash ? { CRASH_BEFORE_CHECKPOINT: crash.step, CRASH_MARKER: crash.marker } : {}),
          },
        },
      );
      runners.push(runner);
      await runner.waitFor(/"ready":true/, 60_000);
      return runner;
    },
    as,
    async startBatch(input, by = "integrator") {
      const res = await as(by).post(`/v1/workflows/${claimBatch.name}/executions`).send(input);
      if (res.status !== 202) throw new Error(`start refused: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
    async approvalWait(id) {
      const body = await view(
        id,
        (b) =>
          b.status === "waiting" && (b.waitingFor as { kind: string }[] | null)?.[0]?.kind === "approval",
        "the approval wait",
      );
      return (
        body.waitingFor as {
          details: { params: Record<string, unknown>; paramsHash: string; quorum: number };
        }[]
      )[0]!.details;
    },
    vote(id, by, decision, paramsHash, reason) {
      return as(by)
        .post(`/v1/executions/${id}/approvals/claims`)
        .send({ decision, paramsHash, ...(reason ? { reason } : {}) });
    },
    view,
    settled: (id, timeoutMs, by) =>
      view(id, (b) => b.status === "completed" || b.status === "failed", "a terminal status", timeoutMs, by),
    async deployRegistry(owner = ISSUER) {
      const hash = await deployer.sendTransaction({
        data: encodeDeployData({ abi: ClaimRegistry.abi, bytecode: ClaimRegistry.bytecode, args: [owner] }),
      });
      const receipt = await receiptOf(hash);
      const registry = getAddress(receipt.contractAddress as Address);
      if (getAddress(owner) !== ISSUER) return registry;
      // The owner allows the other issuer: impersonated so the owner's nonces stay Tenor's.
      await anvil.test.impersonateAccount({ address: owner });
      const ownerWallet = createWalletClient({
        chain: { ...foundry, id: anvil.chainId },
        transport: http(anvil.url),
      });
      const allow = await ownerWallet.writeContract({
        account: owner,
        address: registry,
        abi: ClaimRegistry.abi,
        functionName: "setIssuer",
        args: [OTHER_ISSUER, true],
      });
      await receiptOf(allow);
      await anvil.test.stopImpersonatingAccount({ address: owner });
      return registry;
    },
    async deployToken() {
      const hash = await deployer.sendTransaction({
        data: encodeDeployData({
          abi: TestToken.abi,
          bytecode: TestToken.bytecode,
          args: ["Not", "NOT", 18],
        }),
      });
      return getAddress((await receiptOf(hash)).contractAddress as Address);
    },
    async addDirectly(registry, claims) {
      const hash = await other.writeContract({
        address: registry,
        abi: ClaimRegistry.abi,
        functionName: "addClaims",
        args: [
          claims.map((c) => c.subject as Address),
          claims.map((c) => BigInt(c.topic)),
          claims.map((c) => keccak256(stringToHex(c.data))),
        ],
      });
      const receipt = await receiptOf(hash);
      if (receipt.status !== "success") throw new Error(`direct addClaims reverted: ${hash}`);
    },
    async claimAddedEvents(registry) {
      const logs = await anvil.public.getLogs({ address: registry, fromBlock: 0n, toBlock: "latest" });
      return parseEventLogs({ abi: ClaimRegistry.abi, eventName: "ClaimAdded", logs }).map(
        (e) => `${e.args.subject.toLowerCase()}/${e.args.topic.toString()}`,
      );
    },
    async writesOf(id) {
      const { rows } = await pool.query(
        "SELECT count(*)::int AS n FROM executions WHERE parent_id = $1 AND workflow = 'chain.transaction'",
        [id],
      );
      return rows[0].n as number;
    },
    async stop() {
      await killAllProcesses();
      await api.close().catch(() => undefined);
      await deleteRedisPrefix(prefix, redis).catch(() => undefined);
      await Promise.allSettled([redis.quit(), pool.end()]);
      await db.drop();
      await anvil.stop();
    },
  };
}

/** `n` distinct subjects (fresh addresses) with claims on `topic`. */
export function someClaims(n: number, topic: number | string = 1, tag = "kyc"): ClaimInputRow[] {
  return Array.from({ length: n }, (_, i) => ({
    subject: privateKeyToAccount(keccak256(stringToHex(`${tag}-${topic}-${i}`))).address,
    topic,
    data: `${tag}:${i}`,
  }));
}

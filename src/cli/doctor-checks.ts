import type { Redis } from "ioredis";
import type { Pool } from "pg";
import type { TenorConfig } from "../config/schema.js";
import type { WorkflowRegistry } from "../engine/registry.js";
import type { ReplicaDirectory } from "../ownership/replica-directory.js";
import { SHARD_COUNT_SETTING } from "../ownership/shard-count-guard.js";
import type { ShardDomain } from "../ownership/shard-map.js";
import { appliedMigrationNames, readEngineSetting, readServerSettings } from "../store/pg-doctor.js";
import { inFlightVersions } from "../store/pg-inflight.js";
import { REQUIRED_EVICTION_POLICY, readEvictionPolicy } from "../transport/redis-connection.js";
import { shardList } from "./table.js";

export type CheckStatus = "ok" | "warn" | "fail";

export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
}

export interface DoctorDeps {
  config: TenorConfig;
  pool: Pool;
  redis: Redis;
  /** The workflows of this build (the release's registry). */
  registry: WorkflowRegistry;
  /** Migration names in this build's prisma/migrations, in order. */
  migrations: readonly string[];
  /** Deadline of each chain RPC probe, in milliseconds. */
  rpcTimeoutMs?: number;
  /** The runners and indexers alive now, and the shards they own. */
  replicas: ReplicaDirectory;
}

/** Every check, in the order printed; each runs even when another failed. */
export async function runDoctorChecks(deps: DoctorDeps): Promise<CheckResult[]> {
  const checks: [string, () => Promise<Omit<CheckResult, "name">>][] = [
    ["redis.maxmemory-policy", () => checkEviction(deps.redis)],
    ["postgresql.settings", () => checkPostgres(deps.pool)],
    ["shard-count", () => checkShardCount(deps)],
    ["migrations", () => checkMigrations(deps)],
    ["workflow-registrations", () => checkRegistrations(deps)],
    ["live-runners", () => checkLiveRunners(deps)],
    ["shard-owners", () => checkShardOwners(deps)],
    ["chain-rpc", () => checkChains(deps)],
  ];
  const results: CheckResult[] = [];
  for (const [name, check] of checks) {
    try {
      results.push({ name, ...(await check()) });
    } catch (error) {
      results.push({ name, status: "fail", detail: `could not check: ${(error as Error).message}` });
    }
  }
  return results;
}

async function checkEviction(redis: Redis): Promise<Omit<CheckResult, "name">> {
  const policy = await readEvictionPolicy(redis);
  return policy === REQUIRED_EVICTION_POLICY
    ? { status: "ok", detail: `maxmemory-policy is ${policy}` }
    : {
        status: "fail",
        detail: `maxmemory-policy is ${policy}; must be ${REQUIRED_EVICTION_POLICY} (evicted lock or job keys lose or duplicate work): CONFIG SET maxmemory-policy ${REQUIRED_EVICTION_POLICY}`,
      };
}

const PG_SETTINGS = [
  "server_version_num",
  "default_transaction_isolation",
  "max_connections",
  "idle_session_timeout",
];

async function checkPostgres(pool: Pool): Promise<Omit<CheckResult, "name">> {
  const s = await readServerSettings(pool, PG_SETTINGS);
  const facts = `version ${s.get("server_version_num")}, max_connections ${s.get("max_connections")}, isolation ${s.get("default_transaction_isolation")}, idle_session_timeout ${s.get("idle_session_timeout")}`;
  if (s.get("default_transaction_isolation") !== "read committed") {
    return {
      status: "fail",
      detail: `${facts}: default_transaction_isolation must be read committed (the engine's fences rely on it)`,
    };
  }
  if (Number(s.get("server_version_num")) < 150000) {
    return { status: "warn", detail: `${facts}: PostgreSQL 15 or later is what Tenor is tested on` };
  }
  if (s.get("idle_session_timeout") !== "0") {
    return {
      status: "warn",
      detail: `${facts}: a non-zero idle_session_timeout drops idle pooled connections (shard sessions override it)`,
    };
  }
  return { status: "ok", detail: facts };
}

async function checkShardCount(deps: DoctorDeps): Promise<Omit<CheckResult, "name">> {
  const configured = deps.config.durable.sharding.shardCount;
  const recorded = await readEngineSetting(deps.pool, SHARD_COUNT_SETTING);
  if (recorded === null)
    return { status: "warn", detail: `configured ${configured}; none recorded yet (no role has started)` };
  return Number(recorded) === configured
    ? { status: "ok", detail: `configured ${configured}, recorded ${String(recorded)}` }
    : {
        status: "fail",
        detail: `configured ${configured} but ${String(recorded)} is recorded: every role must use the recorded count`,
      };
}

async function checkMigrations(deps: DoctorDeps): Promise<Omit<CheckResult, "name">> {
  const applied = await appliedMigrationNames(deps.pool);
  if (applied === null)
    return { status: "fail", detail: "the database was never migrated: npm run db:migrate" };
  const missing = deps.migrations.filter((m) => !applied.includes(m));
  const unknown = applied.filter((m) => !deps.migrations.includes(m));
  if (missing.length > 0)
    return { status: "fail", detail: `not applied: ${missing.join(", ")} (npm run db:migrate)` };
  if (unknown.length > 0) {
    return {
      status: "warn",
      detail: `applied but not in this build: ${unknown.join(", ")} (the database is newer)`,
    };
  }
  return { status: "ok", detail: `${applied.length} applied, none pending` };
}

async function checkRegistrations(deps: DoctorDeps): Promise<Omit<CheckResult, "name">> {
  const versions = await inFlightVersions(deps.pool);
  const missing = versions.filter((v) => !deps.registry.version(v.workflow, v.version));
  const total = versions.reduce((n, v) => n + v.executions, 0);
  if (missing.length === 0) {
    return {
      status: "ok",
      detail: `${total} unfinished executions on ${versions.length} workflow versions, all registered`,
    };
  }
  return {
    status: "fail",
    detail: `not registered in this build, so their executions would be held: ${missing
      .map((v) => `${v.workflow}@${v.version} (${v.executions})`)
      .join(", ")}`,
  };
}

/**
 * Fails when no live runner serves a workflow of this build: its executions would not advance.
 * Live as the shard owners count it (docs/ownership.md, "Who is alive").
 */
async function checkLiveRunners(deps: DoctorDeps): Promise<Omit<CheckResult, "name">> {
  const runners = (await deps.replicas.list()).filter((r) => r.domain === "runner" && r.live);
  if (runners.length === 0) {
    return {
      status: "fail",
      detail: `no live runner (none heartbeating within durable.sharding.livenessWindowMs, ${deps.config.durable.sharding.livenessWindowMs} ms): no execution advances; start the runner role (DAPI_ROLE=runner)`,
    };
  }
  const served = new Set(runners.flatMap((r) => r.workflows));
  const declared = deps.registry.all().map((w) => `${w.name}@${w.version}`);
  const unserved = declared.filter((w) => !served.has(w));
  const who = `${runners.length} live runner${runners.length === 1 ? "" : "s"}`;
  if (unserved.length > 0) {
    return {
      status: "fail",
      detail: `no live runner serves ${unserved.join(", ")} (${who}): its executions wait until a runner of this build starts`,
    };
  }
  const serve = runners.length === 1 ? "serves" : "serve";
  return { status: "ok", detail: `${who} ${serve} all ${declared.length} workflow versions of this build` };
}

/**
 * Fails when a shard has no owner: the work mapped to it (a chain's confirmation watcher, its
 * ingest) stops. Indexer shards count only when chains are configured.
 */
async function checkShardOwners(deps: DoctorDeps): Promise<Omit<CheckResult, "name">> {
  const { shardCount } = deps.config.durable.sharding;
  const domains: ShardDomain[] = deps.config.chains.length > 0 ? ["runner", "indexer"] : ["runner"];
  const coverage = await Promise.all(domains.map((domain) => deps.replicas.coverage(domain, shardCount)));
  const gaps = coverage.filter((c) => c.unowned.length > 0);
  if (gaps.length > 0) {
    return {
      status: "fail",
      detail: gaps
        .map(
          (c) =>
            `${c.domain} shards without an owner: ${c.unowned.length} of ${shardCount} (${shardList(c.unowned)})`,
        )
        .join("; "),
    };
  }
  return {
    status: "ok",
    detail: `${domains.map((d) => `${d} ${shardCount}/${shardCount}`).join(", ")} owned${domains.length === 1 ? " (no chains configured: no indexer shards)" : ""}`,
  };
}

async function checkChains(deps: DoctorDeps): Promise<Omit<CheckResult, "name">> {
  const chains = deps.config.chains;
  if (chains.length === 0) return { status: "ok", detail: "no chains configured" };
  const problems: string[] = [];
  const reached: string[] = [];
  for (const chain of chains) {
    for (const url of chain.rpcUrls) {
      const where = `${chain.name} ${new URL(url).host}`;
      try {
        const id = await rpcChainId(url, deps.rpcTimeoutMs ?? 5_000);
        if (id === chain.id) reached.push(where);
        else problems.push(`${where} answers chain id ${id}, configured ${chain.id}`);
      } catch (error) {
        problems.push(`${where} unreachable: ${(error as Error).message}`);
      }
    }
  }
  return problems.length === 0
    ? { status: "ok", detail: `reached ${reached.join(", ")}` }
    : { status: "fail", detail: problems.join("; ") };
}

async function rpcChainId(url: string, timeoutMs: number): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: string };
  if (typeof body.result !== "string") throw new Error(`HTTP ${res.status} without a result`);
  return Number.parseInt(body.result, 16);
}

/**
 * A real runner process for the identity-claim tests: the production runner runtime with the
 * transaction lifecycle, `identity.claim-batch`, the nonce entity, the chain runtime and the
 * confirmation watcher, configured from TENOR_CONFIG (chains and signers).
 *
 * Env: DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX, TENOR_CONFIG, the signer key variables the
 * config names, and optionally CRASH_BEFORE_CHECKPOINT=<step name> with CRASH_MARKER=<file>: the
 * process SIGKILLs itself after that step's work and before its checkpoint, once (the marker file
 * records that it did).
 *
 * Prints `{"ready":true,"pid":<pid>}` on stdout once the runtime runs.
 */
import { existsSync, writeFileSync } from "node:fs";
import { claimBatch } from "../../../../flows/identity-claims/claim-batch.js";
import { createRunnerChainRuntime } from "../../../../src/chain/chain-role-runtime.js";
import { chainTransaction } from "../../../../src/chain/lifecycle/transaction-workflow.js";
import { nonceEntity } from "../../../../src/chain/nonce-entity.js";
import { loadConfig } from "../../../../src/config/load-config.js";
import type { EngineHooks } from "../../../../src/engine/context.js";
import { WorkflowRegistry } from "../../../../src/engine/registry.js";
import { EntityClient } from "../../../../src/keyed/entity-client.js";
import { EntityRegistry } from "../../../../src/keyed/entity-registry.js";
import { createLogger } from "../../../../src/observability/logger.js";
import { createExecutionClient } from "../../../../src/roles/create-execution-client.js";
import { connectDependencies } from "../../../../src/roles/dependencies.js";
import { startRunnerRuntime } from "../../../../src/roles/runner-runtime.js";

const config = loadConfig({ env: process.env });
const logger = createLogger({ level: "warn", base: { role: "runner" } });
const deps = await connectDependencies(config, "runner");
const registry = new WorkflowRegistry([chainTransaction, claimBatch]);
const entities = new EntityRegistry([nonceEntity]);
const entityClient = new EntityClient({
  pool: deps.pool,
  redis: deps.redis,
  prefix: config.redisPrefix,
  registry: entities,
  logger,
});
const executions = createExecutionClient({
  pool: deps.pool,
  redis: deps.redis,
  prefix: config.redisPrefix,
  registry,
  logger,
});
const chain = createRunnerChainRuntime({
  config,
  secrets: { env: process.env },
  pool: deps.pool,
  entities: entityClient,
  executions: executions.client,
  logger,
});
// This process owns every shard: the watcher looks at every execution.
for (let shard = 0; shard < config.durable.sharding.shardCount; shard++) {
  chain.shardWork.start({ domain: "runner", shard, epoch: "1", signal: new AbortController().signal });
}

const crashStep = process.env.CRASH_BEFORE_CHECKPOINT;
const marker = process.env.CRASH_MARKER;
const hooks: EngineHooks = {};
if (crashStep && marker) {
  hooks.beforeCheckpoint = ({ step }) => {
    if (step !== crashStep || existsSync(marker)) return;
    writeFileSync(marker, step);
    process.kill(process.pid, "SIGKILL");
  };
}

await startRunnerRuntime({
  config,
  registry,
  logger,
  pool: deps.pool,
  workerRedis: deps.workerRedis,
  producerRedis: deps.redis,
  entities,
  hooks,
});

process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);

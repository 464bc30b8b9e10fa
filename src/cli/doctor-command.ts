import { parseArgs } from "node:util";
import type { Pool } from "pg";
import { loadConfig } from "../config/load-config.js";
import { WorkflowRegistry } from "../engine/registry.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import type { ReplicaDirectory } from "../ownership/replica-directory.js";
import { migrationNames, readMigrationsList } from "../store/migrations/migrations-directory.js";
import { MIGRATIONS_PATH } from "../store/migrations/paths.js";
import { createPgPool } from "../store/pg-pool.js";
import { createRedisConnection } from "../transport/redis-connection.js";
import { type CliEnv, type CommandIo, EXIT } from "./cli-io.js";
import { type DoctorDeps, runDoctorChecks } from "./doctor-checks.js";
import { renderTable } from "./table.js";

/** `tenor doctor` with the role configuration of `env` (DATABASE_URL, REDIS_URL, TENOR_CONFIG, ...). */
export async function runDoctor(
  args: readonly string[],
  options: {
    env: CliEnv;
    io: CommandIo;
    workflows: readonly AnyWorkflow[];
    /** The replica directory over the doctor's pool (the CLI's composition root builds it). */
    replicas: (pool: Pool, livenessWindowMs: number) => ReplicaDirectory;
  },
): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { json: { type: "boolean" } }, strict: true });
  const config = loadConfig({ env: options.env });
  const redis = createRedisConnection(config.redisUrl, "producer");
  // A Redis that is down is reported by its check, not as an unhandled error event.
  redis.on("error", () => undefined);
  const pool = createPgPool(config.databaseUrl, { applicationName: "tenor-doctor", max: 2 });
  try {
    const migrations = migrationNames(await readMigrationsList(MIGRATIONS_PATH));
    const deps = {
      config,
      pool,
      redis,
      registry: new WorkflowRegistry(options.workflows),
      migrations,
      replicas: options.replicas(pool, config.durable.sharding.livenessWindowMs),
    };
    return await printChecks(deps, values.json ?? false, options.io);
  } finally {
    redis.disconnect();
    await pool.end();
  }
}

/** Every check, a table (or JSON); exit 1 when any check fails (warnings pass). */
async function printChecks(deps: DoctorDeps, json: boolean, io: CommandIo): Promise<number> {
  const checks = await runDoctorChecks(deps);
  const ok = checks.every((c) => c.status !== "fail");
  if (json) io.stdout(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
  else
    io.stdout(
      renderTable(
        ["CHECK", "STATUS", "DETAIL"],
        checks.map((c) => [c.name, c.status.toUpperCase(), c.detail]),
      ),
    );
  return ok ? EXIT.OK : EXIT.FAILED;
}

/**
 * Proves PostgreSQL and Redis answer before the quick start goes on; an unreachable one is named
 * with its URL and how to start it. PostgreSQL is checked at the server level, since the
 * database itself may not exist yet (db:migrate creates it).
 */

import { Redis } from "ioredis";
import pg from "pg";
import { loadConfig } from "../src/config/load-config.js";
import { REDIS_START_HINT } from "../src/roles/dependencies.js";
import { POSTGRES_START_HINT } from "../src/store/migrations/migration-error.js";
import { redactUrl } from "../src/transport/redis-connection.js";

const config = loadConfig({ env: process.env });
const problems: string[] = [];

const server = new URL(config.databaseUrl);
server.pathname = "/postgres";
const client = new pg.Client({ connectionString: server.toString(), connectionTimeoutMillis: 3_000 });
try {
  await client.connect();
  await client.query("SELECT 1");
} catch (error) {
  problems.push(
    `PostgreSQL at ${redactUrl(config.databaseUrl)} is unreachable (${(error as Error).message}). ${POSTGRES_START_HINT}`,
  );
} finally {
  await client.end().catch(() => undefined);
}

const redis = new Redis(config.redisUrl, {
  lazyConnect: true,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
});
try {
  await redis.connect();
  await redis.ping();
} catch (error) {
  problems.push(
    `Redis at ${redactUrl(config.redisUrl)} is unreachable (${(error as Error).message}). ${REDIS_START_HINT}`,
  );
} finally {
  redis.disconnect();
}

if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exit(1);
}
process.stdout.write("PostgreSQL and Redis answer.\n");

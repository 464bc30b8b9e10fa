import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import {
  applyMigrations,
  ensureDatabase,
  quoteIdentifierOf,
  withDatabase,
  withMaintenance,
} from "./database-admin.js";

/** Server URLs the benchmark uses; override with BENCH_DATABASE_URL / BENCH_REDIS_URL. */
export const DEFAULT_DATABASE_SERVER_URL = "postgresql://postgres@127.0.0.1:5432/postgres";
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/**
 * One benchmark run's resources: a migrated template database (`tenor_bench_<run>_tpl`), fresh
 * clones of it per workload, and Redis prefixes under `bench:<run>:`. Everything is dropped or
 * deleted by {@link BenchEnv.cleanup}; the shared Redis is never flushed.
 */
export class BenchEnv {
  readonly runId = randomBytes(4).toString("hex");
  readonly redis: Redis;
  private readonly databases: string[] = [];
  private readonly prefixes: string[] = [];
  private templateName: string | null = null;

  constructor(
    readonly serverUrl: string,
    readonly redisUrl: string,
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  }

  static fromEnv(env: NodeJS.ProcessEnv): BenchEnv {
    return new BenchEnv(
      env.BENCH_DATABASE_URL ?? DEFAULT_DATABASE_SERVER_URL,
      env.BENCH_REDIS_URL ?? DEFAULT_REDIS_URL,
    );
  }

  /** Creates and migrates the run's template once (ensureDatabase + applyMigrations). */
  async prepareTemplate(): Promise<void> {
    const name = `tenor_bench_${this.runId}_tpl`;
    const url = withDatabase(this.serverUrl, name);
    this.databases.push(name);
    await ensureDatabase(url);
    await applyMigrations(url);
    await this.setSynchronousCommit(name);
    this.templateName = name;
  }

  /**
   * A fresh migrated database for one workload (a clone of the template), with
   * `synchronous_commit=on` set on the database so every connection to it (this process, spawned
   * runners, DBOS) commits durably. Returns its URL.
   */
  async freshDatabase(label: string): Promise<string> {
    if (!this.templateName) throw new Error("prepareTemplate() must run before freshDatabase()");
    const name = `tenor_bench_${this.runId}_${label}`;
    this.databases.push(name);
    const template = this.templateName;
    await withMaintenance(this.serverUrl, async (client) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await client.query(
            `CREATE DATABASE ${quoteIdentifierOf(name)} TEMPLATE ${quoteIdentifierOf(template)}`,
          );
          return;
        } catch (error) {
          // 55006: the template is briefly in use (a connection still closing).
          if ((error as { code?: string }).code !== "55006" || attempt >= 20) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
        }
      }
    });
    await this.setSynchronousCommit(name);
    return withDatabase(this.serverUrl, name);
  }

  /** An empty database (not migrated), e.g. for DBOS, which creates its own schema. */
  async emptyDatabase(label: string): Promise<string> {
    const name = `tenor_bench_${this.runId}_${label}`;
    this.databases.push(name);
    await withMaintenance(this.serverUrl, (client) =>
      client.query(`CREATE DATABASE ${quoteIdentifierOf(name)}`),
    );
    await this.setSynchronousCommit(name);
    return withDatabase(this.serverUrl, name);
  }

  /** A Redis key prefix of this run's own: `bench:<run>:<label>`. */
  prefix(label: string): string {
    const prefix = `bench:${this.runId}:${label}`;
    this.prefixes.push(prefix);
    return prefix;
  }

  /** Deletes every key under `prefix` with SCAN + UNLINK (never FLUSHDB/FLUSHALL). */
  async deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      if (keys.length > 0) deleted += await this.redis.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
    return deleted;
  }

  /** Drops every database and deletes every prefix this run created. Never throws. */
  async cleanup(): Promise<void> {
    for (const prefix of this.prefixes) await this.deletePrefix(prefix).catch(() => undefined);
    for (const name of this.databases.reverse()) {
      await withMaintenance(this.serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdentifierOf(name)} WITH (FORCE)`),
      ).catch(() => undefined);
    }
    this.redis.disconnect();
  }

  /** A plain pool on `url` (for the floor, peers' checkpoint tables and bench bookkeeping). */
  pool(url: string, max = 20, applicationName = "tenor-bench"): pg.Pool {
    const pool = new pg.Pool({ connectionString: url, max, application_name: applicationName });
    pool.on("error", () => undefined);
    return pool;
  }

  private async setSynchronousCommit(name: string): Promise<void> {
    await withMaintenance(this.serverUrl, (client) =>
      client.query(`ALTER DATABASE ${quoteIdentifierOf(name)} SET synchronous_commit = on`),
    );
  }
}

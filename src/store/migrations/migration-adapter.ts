import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { catalogCompatiblePool } from "./catalog-compatible-client.js";
import { MAINTENANCE_DATABASE, quoteIdentifier, withDatabase } from "./database-url.js";

/** Prefix of the throwaway databases the schema engine replays migrations into. */
export const SHADOW_DATABASE_PREFIX = "tenor_shadow_";

/**
 * The driver adapter factory handed to the wasm schema engine: the target database through
 * `@prisma/adapter-pg`, plus shadow databases for diffs that start from the migrations directory.
 *
 * Why not `PrismaPg` alone: its `connectToShadowDb` (7.10.0) spreads `{ ...config, database }`
 * into a new pool, but when the config is a `connectionString` pg lets the string win, so the
 * "shadow" pool connects to the target database and replays migrations there. It also drops the
 * shadow database before closing its pool, which fails ("being accessed by other users") and
 * leaves the database behind. This factory builds the shadow URL itself, closes the pool first and
 * drops with `WITH (FORCE)`.
 */
export class MigrationAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = "postgres";
  readonly adapterName = "@prisma/adapter-pg";
  readonly #url: string;
  readonly #open = new Set<SqlDriverAdapter>();

  /** @param url - connection URL of the target database (it need not exist for diffs). */
  constructor(url: string) {
    this.#url = url;
  }

  /** A connection pool to the target database. */
  async connect(): Promise<SqlDriverAdapter> {
    return this.#track(await adapterFor(this.#url));
  }

  /** Creates an empty database on the same server and connects to it; dispose drops it. */
  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const name = `${SHADOW_DATABASE_PREFIX}${randomUUID().replaceAll("-", "")}`;
    await this.#admin(`CREATE DATABASE ${quoteIdentifier(name)}`);
    let adapter: SqlDriverAdapter;
    try {
      adapter = await adapterFor(withDatabase(this.#url, name));
    } catch (error) {
      await this.#admin(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
      throw error;
    }
    const closePool = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await closePool();
      await this.#admin(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
    };
    return this.#track(adapter);
  }

  /**
   * Disposes every adapter the engine opened and did not dispose (ends pools, drops shadow
   * databases). Call once the engine is freed; safe to call twice.
   */
  async close(): Promise<void> {
    const results = await Promise.allSettled([...this.#open].map((adapter) => adapter.dispose()));
    const failed = results.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
  }

  #track(adapter: SqlDriverAdapter): SqlDriverAdapter {
    const dispose = adapter.dispose.bind(adapter);
    this.#open.add(adapter);
    adapter.dispose = async () => {
      if (!this.#open.delete(adapter)) return;
      await dispose();
    };
    return adapter;
  }

  /** Runs one statement on the server's maintenance database with a short-lived client. */
  async #admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: withDatabase(this.#url, MAINTENANCE_DATABASE) });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
}

/** PrismaPg's pool parameter. adapter-pg bundles a newer @types/pg than the project's, same runtime pg. */
type AdapterPool = Extract<ConstructorParameters<typeof PrismaPg>[0], { options: unknown }>;

/** What adapter-pg's adapter holds (7.10.0): its pool and the converter of driver errors. */
interface AdapterInternals {
  client: { query(sql: string): Promise<unknown> };
  onError(error: unknown): never;
}

/**
 * A PrismaPg adapter over a pool of catalog-compatible clients, which it ends on dispose.
 *
 * Its `executeScript` sends a migration script as one simple query: adapter-pg (7.10.0) splits a
 * script on every `;`, which cuts a PL/pgSQL function body (`$$ ... $$`, such as the webhook
 * capture trigger's) into invalid pieces. PostgreSQL runs a multi-statement simple query itself,
 * statement by statement, as the native schema engine sends it.
 */
async function adapterFor(url: string): Promise<SqlDriverAdapter> {
  const pool = catalogCompatiblePool(url) as unknown as AdapterPool;
  const adapter = await new PrismaPg(pool, { disposeExternalPool: true }).connect();
  const internals = adapter as unknown as AdapterInternals;
  adapter.executeScript = async (script: string) => {
    try {
      await internals.client.query(script);
    } catch (error) {
      internals.onError(error);
    }
  };
  return adapter;
}

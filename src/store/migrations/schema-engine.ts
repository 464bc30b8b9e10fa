import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SchemaEngine, SchemaFilter } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { parseDatabaseUrl, redactDatabaseUrl } from "./database-url.js";
import { MigrationAdapterFactory } from "./migration-adapter.js";
import { isUnreachableError, MigrationError, MigrationErrorCode } from "./migration-error.js";
import { loadSchemaEngineBindings } from "./wasm-schema-engine.js";

/** One Prisma schema file, by name and text, as the engine takes it. */
export interface SchemaFile {
  /** File name the engine quotes in diagnostics, e.g. `"schema.prisma"`. */
  path: string;
  /** The file's Prisma schema text. */
  content: string;
}

/** No externally managed tables or enums: Tenor's migrations own the whole `public` schema. */
export const NO_EXTERNAL_ENTITIES: SchemaFilter = { externalTables: [], externalEnums: [] };

/** Options of {@link withSchemaEngine}. */
export interface SchemaEngineOptions {
  /** Target database URL. Shadow databases are created on the same server. */
  databaseUrl: string;
  /** The schema the engine starts with (its datasource provider selects the connector). */
  schema: SchemaFile;
  /** What the engine is asked to do, for error messages, e.g. `"Applying migrations"`. */
  operation: string;
  /** Code of a failure that is not a connection problem. Default: `SCHEMA_ENGINE_FAILED`. */
  failureCode?: MigrationErrorCode;
  /** Receives the engine's log lines (JSON strings). Default: discarded. */
  log?: (line: string) => void;
}

/**
 * Runs `use` with a wasm schema engine connected through the pg driver adapter, then frees the
 * engine and closes every pool and shadow database it opened, whatever `use` did.
 *
 * @throws MigrationError: `DATABASE_UNREACHABLE` (retryable) when the server refuses connections,
 *   `DATABASE_MISSING` when the target database does not exist, `DATABASE_URL_INVALID` for a bad
 *   URL, `options.failureCode` for any other engine failure.
 */
export async function withSchemaEngine<T>(
  options: SchemaEngineOptions,
  use: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  parseDatabaseUrl(options.databaseUrl);
  const { SchemaEngine } = await loadSchemaEngineBindings();
  const factory = new MigrationAdapterFactory(options.databaseUrl);
  const log = options.log ?? (() => {});
  let engine: SchemaEngine | undefined;
  try {
    engine = await SchemaEngine.new(
      { datamodels: [[options.schema.path, options.schema.content]] },
      (line: string) => log(line),
      bindMigrationAwareSqlAdapterFactory(factory),
    );
    return await use(engine);
  } catch (error) {
    throw toMigrationError(error, options);
  } finally {
    engine?.free();
    await factory.close();
  }
}

/**
 * Classifies an error surfaced by the engine. The engine reports driver failures as plain Errors
 * carrying the driver's message and no code, so they are recognised by their message.
 */
function toMigrationError(error: unknown, options: SchemaEngineOptions): MigrationError {
  if (error instanceof MigrationError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const redacted = redactDatabaseUrl(options.databaseUrl);
  if (
    isUnreachableError(error) ||
    /Can't reach database server|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH/.test(message)
  ) {
    return MigrationError.unreachable(redacted, error);
  }
  if (/^Database `.*` does not exist/.test(message)) {
    return new MigrationError(
      MigrationErrorCode.databaseMissing,
      `Database ${redacted} does not exist: create it with ensureDatabase() or npm run db:migrate.`,
      { details: { url: redacted }, cause: error },
    );
  }
  const code = options.failureCode ?? MigrationErrorCode.schemaEngineFailed;
  return new MigrationError(code, `${options.operation} failed: ${message}`, { cause: error });
}

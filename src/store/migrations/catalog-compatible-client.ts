import pg from "pg";

/** PostgreSQL's `text` type OID: what catalog-only types are presented as. */
const TEXT_OID = 25;

/**
 * Catalog column types that `@prisma/adapter-pg` 7.10.0 cannot map to a Prisma column type. The
 * schema engine reads them while describing a schema (e.g. `pg_class.relkind` is `"char"`), so
 * without this every diff or introspection of a database with tables fails with
 * "Column type 'char' could not be deserialized from the database". All of them arrive as
 * strings in the text protocol, so presenting them as `text` is lossless.
 */
const CATALOG_TEXT_OIDS: ReadonlySet<number> = new Set([
  18, // "char"
  24, // regproc
  194, // pg_node_tree
  2205, // regclass
  2206, // regtype
]);

/** A query result or the array of results a multi-statement query returns. */
type Results = pg.QueryResult | pg.QueryResult[] | undefined;

function presentCatalogTypesAsText(results: Results): Results {
  for (const result of Array.isArray(results) ? results : [results]) {
    for (const field of result?.fields ?? []) {
      if (CATALOG_TEXT_OIDS.has(field.dataTypeID)) field.dataTypeID = TEXT_OID;
    }
  }
  return results;
}

type QueryCallback = (error: Error | null, results: Results) => void;
type UntypedQuery = (...args: unknown[]) => unknown;

/**
 * A pg client for the schema engine's pools only (never the application's): identical to
 * `pg.Client` except that result columns of the catalog types above are reported as `text`.
 * Handles both the callback form (used by `pg.Pool#query`) and the promise form (used by
 * `@prisma/adapter-pg` inside transactions); submittables such as cursors pass through untouched.
 */
export class CatalogCompatibleClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: overrides pg's heavily overloaded signature as a whole.
  override query(...args: any[]): any {
    const query = super.query as unknown as UntypedQuery;
    const last = args.at(-1);
    if (typeof last === "function") {
      const callback = last as QueryCallback;
      const wrapped: QueryCallback = (error, results) =>
        callback(error, error ? results : presentCatalogTypesAsText(results));
      return query.apply(this, [...args.slice(0, -1), wrapped]);
    }
    const returned = query.apply(this, args);
    if (returned instanceof Promise)
      return returned.then((results: Results) => presentCatalogTypesAsText(results));
    return returned;
  }
}

/** A pool of {@link CatalogCompatibleClient}s for `connectionString`. */
export function catalogCompatiblePool(connectionString: string): pg.Pool {
  return new pg.Pool({ connectionString, Client: CatalogCompatibleClient, max: 4 });
}

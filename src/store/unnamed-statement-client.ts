import pg from "pg";

type UntypedQuery = (...args: unknown[]) => unknown;

/** A query config object (not a submittable such as a cursor, which pg drives itself). */
function isNamedConfig(value: unknown): value is { name: string; text: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { submit?: unknown }).submit !== "function" &&
    typeof (value as { name?: unknown }).name === "string" &&
    typeof (value as { text?: unknown }).text === "string"
  );
}

/**
 * A pg client that sends every statement unnamed: identical to `pg.Client` except that the
 * `name` of a query config is dropped. pg remembers per client which names it has prepared and
 * skips the Parse the second time; behind a transaction-mode pooler each transaction may land on
 * another server connection, where that statement was never prepared (26000 "prepared statement
 * … does not exist") or was prepared by another client (42P05 "… already exists"). PgBouncer
 * ≥ 1.21 with `max_prepared_statements` tracks named statements itself; older ones, such as
 * Debian 12's 1.18, need this (`database.namedStatements: false`).
 */
export class UnnamedStatementClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: overrides pg's heavily overloaded signature as a whole.
  override query(...args: any[]): any {
    const query = super.query as unknown as UntypedQuery;
    const [first, ...rest] = args;
    if (!isNamedConfig(first)) return query.apply(this, args);
    const { name: _unnamed, ...unnamed } = first;
    return query.apply(this, [unnamed, ...rest]);
  }
}

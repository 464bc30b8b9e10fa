/**
 * The few database-administration functions the benchmark borrows from src/store/migrations,
 * re-exported under one roof so bench code has a single import for them.
 */

export { quoteIdentifier as quoteIdentifierOf } from "../../src/store/migrations/database-url.js";
export { withMaintenanceClient as withMaintenance } from "../../src/store/migrations/ensure-database.js";
export { applyMigrations, ensureDatabase, withDatabase } from "../../src/store/migrations/index.js";

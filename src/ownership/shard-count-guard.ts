import type { Pool } from "pg";
import { OWNERSHIP_ERRORS } from "../errors/ownership-errors.js";
import { TenorError } from "../errors/tenor-error.js";
import { recordSettingOnce } from "./store/pg-shard-ownership.js";

/** The `engine_settings` key under which the first process records the shard count. */
export const SHARD_COUNT_SETTING = "durable.sharding.shardCount";

/**
 * Records the shard count if no process has yet, then refuses to continue when the recorded
 * one differs: a replica hashing keys into another number of shards would own work another
 * replica also owns. Every role calls this at startup (the api too, which owns no shard, so a
 * misconfigured release fails as a whole instead of in one role).
 *
 * @throws TenorError `SHARD_COUNT_MISMATCH`, naming both values and how to fix it.
 */
export async function assertShardCount(pool: Pool, configured: number): Promise<void> {
  const recorded = await recordSettingOnce(pool, SHARD_COUNT_SETTING, configured);
  if (recorded === configured) return;
  throw new TenorError(
    OWNERSHIP_ERRORS.SHARD_COUNT_MISMATCH,
    `durable.sharding.shardCount is ${configured} in this process but ${recorded} is recorded in the ` +
      `database (engine_settings '${SHARD_COUNT_SETTING}'); every role must use the same shard count. ` +
      `Set durable.sharding.shardCount to ${recorded}, or re-shard deliberately with every replica stopped.`,
    { details: { configured, recorded } },
  );
}

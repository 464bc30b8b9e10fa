import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/observability/logger.js";
import { ShardOwner } from "../../../src/ownership/shard-owner.js";
import { assertOwnerEpoch, withShardFence } from "../../../src/ownership/store/shard-fence.js";
import { createTestDatabase, type TestDatabase } from "../../support/database.js";
import { waitUntil } from "../../support/processes.js";

/**
 * Owner epochs: every acquisition increments the shard's epoch in `shard_owners`, and a write
 * fenced with an older epoch is refused by PostgreSQL inside its own transaction.
 */

let db: TestDatabase;
const owners: ShardOwner[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("CREATE TABLE shard_writes (shard int, epoch text, note text)");
});

afterAll(async () => {
  for (const owner of owners) await owner.stop().catch(() => undefined);
  await db?.drop();
});

function owner(id: string): ShardOwner {
  const created = new ShardOwner({
    connectionString: db.url,
    pool: db.pool,
    domain: "indexer",
    shardCount: 2,
    refreshIntervalMs: 200,
    livenessWindowMs: 1_000,
    replicaId: id,
    logger: createLogger({ level: "error" }),
  });
  owners.push(created);
  return created;
}

describe("owner epoch", () => {
  it("increments on each acquisition and refuses a write carrying a stale epoch", async () => {
    const first = owner("epoch-a");
    await first.start();
    const old = first.lease(0);
    expect(old).toBeDefined();
    if (!old) return;
    await withShardFence(db.pool, old, (client) =>
      client.query("INSERT INTO shard_writes VALUES ($1, $2, 'first owner')", [old.shard, old.epoch]),
    );
    await first.stop();
    expect(old.signal.aborted).toBe(true);

    const second = owner("epoch-b");
    await second.start();
    await waitUntil("epoch-b to own shard 0", () => second.lease(0));
    const current = second.lease(0);
    expect(BigInt(current?.epoch ?? "0")).toBe(BigInt(old.epoch) + 1n);

    // The first owner's late write: refused, and nothing of it commits.
    await expect(
      withShardFence(db.pool, old, (client) =>
        client.query("INSERT INTO shard_writes VALUES ($1, $2, 'late write')", [old.shard, old.epoch]),
      ),
    ).rejects.toMatchObject({ code: "SHARD_EPOCH_STALE", details: { currentOwner: "epoch-b" } });
    if (current)
      await withShardFence(db.pool, current, (client) =>
        client.query("INSERT INTO shard_writes VALUES ($1, $2, 'second owner')", [0, current.epoch]),
      );
    const { rows } = await db.pool.query<{ note: string }>("SELECT note FROM shard_writes ORDER BY note");
    expect(rows.map((r) => r.note)).toEqual(["first owner", "second owner"]);
  });

  it("refuses a shard that was never owned", async () => {
    const client = await db.pool.connect();
    try {
      await expect(
        assertOwnerEpoch(client, { domain: "runner", shard: 99, epoch: "1" }),
      ).rejects.toMatchObject({
        code: "SHARD_EPOCH_STALE",
      });
    } finally {
      client.release();
    }
  });
});

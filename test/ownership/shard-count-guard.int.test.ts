import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertShardCount } from "../../src/ownership/shard-count-guard.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { type RoleProcess, spawnRole } from "../support/role-process.js";

let db: TestDatabase;
const prefix = testRedisPrefix(import.meta.url);
const running: RoleProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const role of running) role.kill("SIGKILL");
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

describe("shard count guard", () => {
  it("records the first count and refuses another, naming both", async () => {
    await assertShardCount(db.pool, 64);
    await assertShardCount(db.pool, 64);
    await expect(assertShardCount(db.pool, 32)).rejects.toMatchObject({
      code: "SHARD_COUNT_MISMATCH",
      details: { configured: 32, recorded: 64 },
      message: expect.stringMatching(/is 32 in this process but 64 is recorded/),
    });
  });

  it("a role process with another shard count refuses to start, naming both values", async () => {
    await assertShardCount(db.pool, 64);
    const dir = mkdtempSync(join(tmpdir(), "tenor-shards-"));
    const file = join(dir, "tenor.yaml");
    writeFileSync(file, "durable:\n  sharding:\n    shardCount: 32\n");
    const role = spawnRole({
      DAPI_ROLE: "api",
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
      TENOR_REDIS_PREFIX: prefix,
      TENOR_API_PORT: String(await freePort()),
      TENOR_CONFIG: file,
    });
    running.push(role);
    const { code } = await role.exited;
    expect(code).toBe(1);
    expect(role.output()).toMatch(/durable\.sharding\.shardCount is 32 in this process but 64 is recorded/);
  });
});

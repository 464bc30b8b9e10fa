import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { entryCommand } from "../support/fast-entry.js";
import { freePort } from "../support/ports.js";
import { killAllProcesses, spawnProcess, type TestProcess } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/**
 * The quick start's demo as the README runs it: `npm run local` with no chain configured (so the
 * dev chain starts anvil, deploys the resolver and configures `demo-bond`), the three real roles,
 * and scripts/demo.ts creating a bond through the Platform API: every milestone with its hash,
 * paused → active, and the execution's signed evidence export.
 */

let db: TestDatabase;
let env: Record<string, string>;
let local: TestProcess;
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    TENOR_REDIS_PREFIX: prefix,
    TENOR_API_PORT: String(await freePort()),
    TENOR_API_HEALTH_PORT: String(await freePort()),
    TENOR_RUNNER_HEALTH_PORT: String(await freePort()),
    TENOR_INDEXER_HEALTH_PORT: String(await freePort()),
    TENOR_DEV_CHAIN: "",
    TENOR_DEV_CHAIN_STATE: "off",
    TENOR_DEV_CHAIN_PORT: String(await freePort()),
  };
  local = spawnProcess(
    "local",
    process.execPath,
    ["--import", "tsx", "scripts/local.ts", "--wait-ready", "--ready-timeout-ms", "170000"],
    {
      env,
    },
  );
  await local.waitFor(/all roles ready/, 180_000);
}, 200_000);

afterAll(async () => {
  local?.signal("SIGTERM");
  await Promise.race([local?.exit, new Promise((r) => setTimeout(r, 15_000))]);
  await killAllProcesses();
  await deleteRedisPrefix(prefix).catch(() => undefined);
  await db?.drop();
});

describe("the quick start's asset creation", () => {
  it("creates a bond on the dev chain: milestones with hashes, paused → active", async () => {
    const demo = spawnProcess("demo", ...entryCommand("scripts/demo.ts", ["--symbol", "QSB1"]), {
      env,
    });
    const exit = await demo.exit;
    const out = demo.stdout() + demo.stderr();
    expect(exit.code, out).toBe(0);
    expect(out).toMatch(/execution [0-9a-f-]{36} \(asset\.create, demo-bond QSB1\) — 202/);
    for (const step of ["token.deploy", "feed.create", "feed.observe", "feed.bound"]) {
      expect(out).toMatch(new RegExp(`milestone: ${step.replace(".", "\\.")} +0x[0-9a-f]{64}`));
    }
    expect(out).toMatch(/asset [0-9a-f-]{36}: paused\n/);
    expect(out).toMatch(/asset [0-9a-f-]{36}: paused → active/);
    expect(out).toContain('"status":"active"');
    // Evidence export works out of the box: the quick start signs with the development key.
    expect(out).toMatch(
      /evidence: tenor\.evidence\/2, \d+ hash-chained records, head [0-9a-f]{12}…, signed by key [0-9a-f]{12}…/,
    );
  }, 150_000);
});

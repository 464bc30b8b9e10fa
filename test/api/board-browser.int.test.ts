import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { runKeysCommand } from "../../src/cli/keys-command.js";
import { loadConfig } from "../../src/config/load-config.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { createLogger } from "../../src/observability/logger.js";
import { createPlatformApi } from "../../src/roles/platform-api.js";
import { createPgPool } from "../../src/store/pg-pool.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { keysCommandStores } from "../support/api-client.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/**
 * Bull Board as a person uses it: the Debian chromium (installed by `npm test`'s setup step, scripts/test-setup.ts), headless, driven by
 * playwright-core against the api app on a real port. No runner is needed: the board reads Redis.
 */
const CHROMIUM = "/usr/bin/chromium";

let db: TestDatabase;
let pool: Pool;
let redis: Redis;
let server: Server;
let base: string;
let browser: Browser;
let closeApi: () => Promise<void>;
let keys: ReturnType<typeof createPlatformApi>["keys"];
const prefix = testRedisPrefix(import.meta.url);

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({ env: { DATABASE_URL: db.url, REDIS_URL: redisUrl() } });
  pool = createPgPool(db.url, { applicationName: "tenor-board-browser-test", max: 4 });
  redis = createRedisConnection(config.redisUrl, "producer");
  const api = createPlatformApi({
    settings: config.api,
    pool,
    redis,
    prefix,
    registry: new WorkflowRegistry([]),
    logger: createLogger({ level: "error" }),
    readiness: {},
    health: { draining: false },
  });
  keys = api.keys;
  closeApi = api.close;
  server = api.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await closeApi?.();
  await deleteRedisPrefix(prefix, redis).catch(() => undefined);
  await Promise.allSettled([redis?.quit(), pool?.end()]);
  await db?.drop();
});

describe("Bull Board in a browser", () => {
  it("signs in with a platform key, shows the queues, signs out, and a revoked key's session stops working", async () => {
    const issued = await issueApiKey(keys, { orgId: null, role: "platform-operator", subject: "ops@tenor" });
    const context = await browser.newContext();
    const page = await context.newPage();

    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
    await page.fill("#key", issued.key);
    await Promise.all([page.waitForURL(`${base}/admin/queues`), page.click("button[type=submit]")]);
    await page.getByText("executions", { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.getByText("schedules", { exact: true }).first().waitFor();
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: "tenor_board", httpOnly: true, sameSite: "Strict", path: "/admin" });
    expect(await page.evaluate("document.cookie")).toBe("");

    // The board's own API calls are same-origin; a read-only operator's pause is refused.
    const pause = await page.evaluate(async () => {
      const res = await fetch("/admin/queues/api/queues/executions/pause", { method: "PUT" });
      return { status: res.status, type: res.headers.get("content-type"), body: await res.json() };
    });
    expect(pause).toMatchObject({ status: 403, body: { code: "QUEUES_READ_ONLY" } });
    expect(pause.type).toContain("application/problem+json");

    await page.goto(`${base}/admin/sign-out`);
    await Promise.all([page.waitForURL(`${base}/admin/sign-in`), page.click("button[type=submit]")]);
    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe("/admin/sign-in");

    // Signed in again, then the key is revoked: the next page load is back at the sign-in.
    await page.fill("#key", issued.key);
    await Promise.all([page.waitForURL(`${base}/admin/queues`), page.click("button[type=submit]")]);
    await page.getByText("executions", { exact: true }).first().waitFor({ timeout: 30_000 });
    expect(
      await runKeysCommand(["revoke", issued.record.id], keysCommandStores(pool), {
        stdout: () => {},
        stderr: () => {},
      }),
    ).toBe(0);
    await page.goto(`${base}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
    expect(await context.cookies()).toEqual([]);
    await context.close();
  }, 90_000);
});

import { generateKeyPairSync } from "node:crypto";
import type { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import { verifyEvidence } from "../../src/api/evidence/evidence-chain.js";
import { loadConfig } from "../../src/config/load-config.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";
import { createPlatformApi } from "../../src/roles/platform-api.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { newExecution } from "../support/new-execution.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { directTurnRunner } from "../support/turn-runner.js";

/**
 * `GET /v1/executions/{id}/evidence` in process (no runner: one turn is run here): the records it
 * chains, the roles and organisations it serves, and the refusal without a signing key.
 */
const TX = `0x${"ab".repeat(32)}`;
const broadcast = defineWorkflow({
  name: "evidence.broadcast",
  version: 1,
  input: z.object({ to: z.string() }),
  output: z.object({}),
  async run(ctx) {
    await ctx.step("tx.broadcast", () => ({ submitted: { txHash: TX }, nonce: 7 }));
    await ctx.waitForSignal("confirmed", { schema: z.object({}) });
    return {};
  },
});

let db: TestDatabase;
let redis: Redis;
const prefix = testRedisPrefix(import.meta.url);
const closers: (() => Promise<void>)[] = [];
const { privateKey } = generateKeyPairSync("ed25519");

function app(withKey: boolean) {
  const api = createPlatformApi({
    settings: loadConfig({ env: { DATABASE_URL: db.url, REDIS_URL: redisUrl() } }).api,
    pool: db.pool,
    redis,
    prefix,
    registry: new WorkflowRegistry([broadcast]),
    logger: createLogger({ level: "error" }),
    readiness: {},
    health: { draining: false },
    ...(withKey ? { evidenceKey: privateKey } : {}),
  });
  closers.push(api.close);
  return api;
}

beforeAll(async () => {
  db = await createTestDatabase();
  redis = createRedisConnection(redisUrl(), "producer");
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await deleteRedisPrefix(prefix, redis).catch(() => undefined);
  await redis?.quit();
  await db?.drop();
});

describe("evidence export", () => {
  it("chains the start, journal, transitions and transaction hashes, for operators of the run's organisation only", async () => {
    const store = new PgExecutionStore(db.pool);
    const { summary } = await store.createExecution(
      newExecution({ workflow: broadcast.name, orgId: "acme", input: { to: "0x1" } }),
    );
    const runner = directTurnRunner(store, [broadcast]);
    expect((await runner.run(summary.id)).kind).toBe("parked");
    const signed = app(true);
    const key = async (orgId: string, role: "operator" | "integrator") =>
      (await issueApiKey(signed.keys, { orgId, role, subject: `${role}@${orgId}` })).key;
    const get = async (which: ReturnType<typeof app>, apiKey: string) =>
      request(which.app)
        .get(`/v1/executions/${summary.id}/evidence`)
        .set("authorization", `Bearer ${apiKey}`);

    const res = await get(signed, await key("acme", "operator"));
    expect(res.status).toBe(200);
    expect(res.headers["content-disposition"]).toContain(`evidence-${summary.id}.json`);
    expect(verifyEvidence(res.body).ok).toBe(true);
    const types = res.body.records.map((r: { type: string }) => r.type);
    expect(types[0]).toBe("execution");
    expect(res.body.records[0].data).toMatchObject({ workflow: broadcast.name, input: { to: "0x1" } });
    expect(types).toEqual(expect.arrayContaining(["journal", "transition", "transaction"]));
    expect(res.body.records.find((r: { type: string }) => r.type === "transaction").data).toEqual({
      position: 0,
      step: "tx.broadcast",
      path: "result.submitted.txHash",
      hash: TX,
    });
    expect(res.body.records.at(-1)).toMatchObject({
      type: "transition",
      data: { status: "waiting", cause: "current" },
    });

    expect((await get(signed, await key("acme", "integrator"))).status).toBe(403);
    expect((await get(signed, await key("other", "operator"))).body.code).toBe("EXECUTION_NOT_FOUND");
    const unsigned = await get(app(false), await key("acme", "operator"));
    expect(unsigned.status).toBe(503);
    expect(unsigned.body.code).toBe("EVIDENCE_SIGNING_DISABLED");
  }, 60_000);
});

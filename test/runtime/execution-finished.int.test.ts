import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ExecutionClient, type ExecutionView } from "../../src/engine/execution-client.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { createLogger } from "../../src/observability/logger.js";
import { announceFinished, FinishedExecutionListener } from "../../src/runtime/execution-finished.js";
import { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { PgExecutionQueries } from "../../src/store/pg-execution-queries.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { waitUntil } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";

/**
 * A wait for an execution it just started learns of the finish from the runner's announcement
 * without reading PostgreSQL first, as long as the subscription listened throughout; an
 * announcement that came before the wait is remembered; after a broken subscription the wait
 * reads first, as it must. Nothing runs the executions: the test finishes them in PostgreSQL and
 * announces them itself, as a runner does.
 */

const quick = defineWorkflow({
  name: "test.finished.quick",
  version: 1,
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  async run() {
    return { ok: true };
  },
});

/** Fallback re-read of the waits: far beyond the test timeout, so only an announcement or a first read can answer. */
const NO_FALLBACK_MS = 600_000;

const logger = createLogger({ level: "error" });
const prefix = testRedisPrefix(import.meta.url);
let db: TestDatabase;
let redis: Redis;
let publisher: Redis;
let queue: ExecutionQueue;
let store: PgExecutionStore;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(redisUrl());
  publisher = new Redis(redisUrl());
  queue = new ExecutionQueue(redis, prefix, logger);
  store = new PgExecutionStore(db.pool);
});

afterAll(async () => {
  await queue?.close();
  await deleteRedisPrefix(prefix, publisher);
  publisher?.disconnect();
  redis?.disconnect();
  await db?.drop();
});

/** A client whose waits use `listener` and never re-read on their own. */
function clientWith(listener: FinishedExecutionListener): ExecutionClient {
  return new ExecutionClient({
    registry: new WorkflowRegistry([quick]),
    store,
    queries: new PgExecutionQueries(db.pool),
    transport: queue,
    finished: listener,
    fallbackPollMs: NO_FALLBACK_MS,
  });
}

/** Subscribes `listener` (its first watch does) and waits until it vouches for what follows. */
async function listening(listener: FinishedExecutionListener): Promise<void> {
  await waitUntil("the subscription live", async () => {
    const watch = await listener.watch(randomUUID(), () => {}, { since: Date.now() });
    watch.stop();
    return watch.heardSince;
  });
}

/** Commits the execution's completion, as a runner's turn does, without announcing it. */
async function complete(executionId: string): Promise<void> {
  const turn = await store.beginTurn(executionId);
  if (!turn) throw new Error(`execution ${executionId} vanished`);
  await store.complete(turn.fence, { ok: true });
}

/** The caller's read, counted: how often the wait asked PostgreSQL. */
function countingRead(client: ExecutionClient, executionId: string) {
  const counter = {
    reads: 0,
    read: (): Promise<ExecutionView> => {
      counter.reads += 1;
      return client.view(executionId);
    },
  };
  return counter;
}

/** Watches `executionId`; `heard` resolves once its announcement reached the listener. */
async function watchFor(
  listener: FinishedExecutionListener,
  executionId: string,
): Promise<{ heard: Promise<void> }> {
  let told = () => {};
  const heard = new Promise<void>((resolve) => {
    told = resolve;
  });
  const watch = await listener.watch(executionId, () => told());
  return { heard: heard.finally(() => watch.stop()) };
}

/**
 * Lets every step of a wait that needs no I/O run: a round trip to Redis completes only after
 * the pending promise continuations, so a first read the wait was going to make has begun.
 */
async function settle(): Promise<void> {
  await publisher.ping();
}

/** The subscriber connection named `connectionName`, as the Redis server lists it. */
async function subscriberId(connectionName: string): Promise<string | undefined> {
  const list = (await publisher.call("CLIENT", "LIST", "TYPE", "pubsub")) as string;
  const line = list.split("\n").find((l) => l.includes(` name=${connectionName} `));
  return line?.match(/^id=(\d+) /)?.[1];
}

describe("waiting for an execution just started", () => {
  it("reads nothing until the announcement, then once, and answers with that read", async () => {
    const listener = new FinishedExecutionListener(redis, prefix, logger);
    try {
      const client = clientWith(listener);
      await listening(listener);
      const startedAt = Date.now();
      const { executionId } = await client.start({ workflow: quick.name, input: {} });
      const counter = countingRead(client, executionId);
      const waiting = client.waitUntilTerminal(executionId, NO_FALLBACK_MS, counter.read, { startedAt });
      await settle();
      expect(counter.reads).toBe(0);
      await complete(executionId);
      await announceFinished(publisher, prefix, executionId);
      const view = await waiting;
      expect(view).toMatchObject({ id: executionId, status: "completed", output: { ok: true } });
      expect(counter.reads).toBe(1);
    } finally {
      await listener.close();
    }
  });

  it("hears at once an announcement that arrived before the wait was registered", async () => {
    const listener = new FinishedExecutionListener(redis, prefix, logger);
    try {
      const client = clientWith(listener);
      await listening(listener);
      const startedAt = Date.now();
      const { executionId } = await client.start({ workflow: quick.name, input: {} });
      await complete(executionId);
      await announceFinished(publisher, prefix, executionId);
      // Announcements reach the subscriber in order: once a later one was heard, so was this one.
      const later = randomUUID();
      const laterWatch = await watchFor(listener, later);
      await announceFinished(publisher, prefix, later);
      await laterWatch.heard;

      let told = false;
      const watch = await listener.watch(executionId, () => (told = true), { since: startedAt });
      watch.stop();
      expect(told).toBe(true);

      const counter = countingRead(client, executionId);
      const view = await client.waitUntilTerminal(executionId, NO_FALLBACK_MS, counter.read, { startedAt });
      expect(view).toMatchObject({ id: executionId, status: "completed" });
      expect(counter.reads).toBe(1);
    } finally {
      await listener.close();
    }
  });

  it("reads first when the subscription broke after the start, and skips it again once re-subscribed", async () => {
    // A connection named for this test alone: its listener's subscriber inherits the name, so
    // the test kills that subscriber and no other client of the server.
    const connectionName = `finished-${randomUUID().slice(0, 8)}`;
    const named = new Redis(redisUrl(), { connectionName });
    const listener = new FinishedExecutionListener(named, prefix, logger);
    try {
      const client = clientWith(listener);
      await listening(listener);
      const startedAt = Date.now();
      const { executionId } = await client.start({ workflow: quick.name, input: {} });
      const killed = await subscriberId(connectionName);
      if (!killed) throw new Error("the listener's subscriber is not connected");
      await publisher.call("CLIENT", "KILL", "ID", killed);
      // ioredis reconnects and re-subscribes: a new connection of the same name.
      await waitUntil("the subscriber reconnected", async () => {
        const id = await subscriberId(connectionName);
        return id !== undefined && id !== killed;
      });

      // Whatever was announced while it was away is lost to it: the wait must not trust silence.
      const counter = countingRead(client, executionId);
      const waiting = client.waitUntilTerminal(executionId, NO_FALLBACK_MS, counter.read, { startedAt });
      await settle();
      expect(counter.reads).toBe(1);
      await complete(executionId);
      await announceFinished(publisher, prefix, executionId);
      expect(await waiting).toMatchObject({ id: executionId, status: "completed" });
      expect(counter.reads).toBe(2);

      // The re-subscription is acknowledged: executions started from then on are heard again.
      await listening(listener);
      const againAt = Date.now();
      const again = await client.start({ workflow: quick.name, input: {} });
      const counterAgain = countingRead(client, again.executionId);
      const waitingAgain = client.waitUntilTerminal(again.executionId, NO_FALLBACK_MS, counterAgain.read, {
        startedAt: againAt,
      });
      await settle();
      expect(counterAgain.reads).toBe(0);
      await complete(again.executionId);
      await announceFinished(publisher, prefix, again.executionId);
      expect(await waitingAgain).toMatchObject({ status: "completed" });
      expect(counterAgain.reads).toBe(1);
    } finally {
      await listener.close();
      named.disconnect();
    }
  });

  it("reads first when more was announced since the start than the memory keeps", async () => {
    const listener = new FinishedExecutionListener(redis, prefix, logger, { recent: { capacity: 3 } });
    try {
      const client = clientWith(listener);
      await listening(listener);
      const startedAt = Date.now();
      const { executionId } = await client.start({ workflow: quick.name, input: {} });
      await complete(executionId);
      await announceFinished(publisher, prefix, executionId);
      // Three more announcements push it out of a memory of three.
      const others = [randomUUID(), randomUUID(), randomUUID()];
      const last = others.at(-1) as string;
      const lastWatch = await watchFor(listener, last);
      for (const other of others) await announceFinished(publisher, prefix, other);
      await lastWatch.heard;

      let told = false;
      const watch = await listener.watch(executionId, () => (told = true), { since: startedAt });
      watch.stop();
      expect(told).toBe(false);
      expect(watch.heardSince).toBe(false);

      const counter = countingRead(client, executionId);
      const view = await client.waitUntilTerminal(executionId, NO_FALLBACK_MS, counter.read, { startedAt });
      expect(view).toMatchObject({ id: executionId, status: "completed" });
      expect(counter.reads).toBe(1);
    } finally {
      await listener.close();
    }
  });
});

import { afterAll, describe, expect, it } from "vitest";
import {
  createRedisConnection,
  readEvictionPolicy,
  redactUrl,
} from "../../src/transport/redis-connection.js";
import { redisUrl } from "../support/redis.js";

const opened: { quit(): Promise<unknown> }[] = [];
afterAll(async () => {
  await Promise.all(opened.map((r) => r.quit()));
});

describe("Redis connections", () => {
  it("gives workers maxRetriesPerRequest null, so a Redis restart cannot silence them (BullMQ #648)", async () => {
    const worker = createRedisConnection(redisUrl(), "worker");
    const producer = createRedisConnection(redisUrl(), "producer");
    opened.push(worker, producer);
    expect(worker.options.maxRetriesPerRequest).toBeNull();
    expect(producer.options.maxRetriesPerRequest).toBe(3);
    expect(await worker.ping()).toBe("PONG");
  });

  it("reads the eviction policy of the real server", async () => {
    const redis = createRedisConnection(redisUrl(), "producer");
    opened.push(redis);
    expect(await readEvictionPolicy(redis)).toBe("noeviction");
  });

  it("hides passwords in URLs it reports", () => {
    expect(redactUrl("redis://:hunter2@cache:6379/0")).toBe("redis://:***@cache:6379/0");
  });
});

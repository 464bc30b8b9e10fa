import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "./redis.js";

describe("test Redis prefixes", () => {
  const redis = new Redis(redisUrl());

  afterAll(() => {
    redis.disconnect();
  });

  it("are unique per call and safe to use as a SCAN pattern", () => {
    const a = testRedisPrefix(import.meta.url);
    const b = testRedisPrefix(import.meta.url);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^t:redis:[0-9a-f]{8}$/);
    expect(testRedisPrefix("weird*[name]?.int.test.ts")).toMatch(/^t:weird__name__:[0-9a-f]{8}$/);
  });

  it("delete only their own keys", async () => {
    const mine = testRedisPrefix(import.meta.url);
    const neighbour = `${mine}x`; // shares the text prefix but not the "<prefix>:" namespace
    const keys = Array.from({ length: 1_200 }, (_, i) => `${mine}:queue:${i}`);
    for (let i = 0; i < keys.length; i += 400) {
      await redis.mset(...keys.slice(i, i + 400).flatMap((key) => [key, "1"]));
    }
    await redis.set(`${neighbour}:queue:0`, "kept");
    try {
      expect(await deleteRedisPrefix(mine, redis)).toBe(keys.length);
      expect(await redis.exists(...keys.slice(0, 10))).toBe(0);
      expect(await redis.get(`${neighbour}:queue:0`)).toBe("kept");
    } finally {
      await deleteRedisPrefix(neighbour, redis);
    }
  });

  it("refuse a prefix that would match other keys", async () => {
    await expect(deleteRedisPrefix("t:*", redis)).rejects.toThrow(/pattern-like/);
    await expect(deleteRedisPrefix("", redis)).rejects.toThrow(/pattern-like/);
  });
});

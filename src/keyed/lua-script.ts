import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * A Lua script run by its SHA (EVALSHA), loaded on first use and again whenever Redis answers
 * NOSCRIPT (after a restart or SCRIPT FLUSH), so callers never manage script caches.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(
    readonly name: string,
    private readonly source: string,
  ) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!/NOSCRIPT/.test((error as Error).message)) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

import type { RequestHandler } from "express";
import { ipKeyGenerator, rateLimit } from "express-rate-limit";
import type { Redis } from "ioredis";
import { RedisStore } from "rate-limit-redis";
import { API_ERRORS } from "./api-error-codes.js";
import { hashApiKey } from "./auth/api-key.js";
import { apiError, sendProblem, toProblem } from "./problem.js";

export interface RateLimitSettings {
  /** Requests allowed per window. */
  max: number;
  /** Window length, in seconds. */
  windowSeconds: number;
}

/**
 * Per-key request budget (README, "Rate limits"), counted in Redis under `<prefix>:rate-limit:` so
 * every api replica spends the same budget. The key is the SHA-256 of the presented bearer key (the
 * key itself never reaches Redis); a request without one counts against its client address. Over
 * budget: 429 problem+json RATE_LIMITED with `Retry-After` (seconds). A Redis failure fails the
 * request (500), never skips the limit silently.
 */
export function apiRateLimit(redis: Redis, prefix: string, settings: RateLimitSettings): RequestHandler {
  return rateLimit({
    windowMs: settings.windowSeconds * 1000,
    limit: settings.max,
    standardHeaders: "draft-7",
    legacyHeaders: false,
    // Checks meant for the default IP key; ours is the key's hash. They would write to the console.
    validate: false,
    keyGenerator: (req) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
      return match ? `key:${hashApiKey(match[1] as string)}` : `ip:${ipKeyGenerator(req.ip ?? "unknown")}`;
    },
    store: new RedisStore({
      prefix: `${prefix}:rate-limit:`,
      sendCommand: (command: string, ...args: string[]) =>
        redis.call(command, ...args) as Promise<number | string | (number | string)[]>,
    }),
    handler: (req, res) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = resetTime
        ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000))
        : settings.windowSeconds;
      res.setHeader("Retry-After", String(seconds));
      sendProblem(
        res,
        toProblem(
          apiError(
            API_ERRORS.RATE_LIMITED,
            `this key made more than ${settings.max} requests in ${settings.windowSeconds} s; retry after ${seconds} s`,
            { limit: settings.max, windowSeconds: settings.windowSeconds, retryAfterSeconds: seconds },
          ),
          req.originalUrl,
        ),
      );
    },
  });
}

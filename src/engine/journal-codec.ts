import { z } from "zod";

/**
 * Journal encoding of step results. With a schema, the value is encoded through it (typed values
 * become their canonical journal strings, docs/values.md) and decoded through it on replay. Without
 * one, the value must already be JSON-safe; it is round-tripped so the first run sees exactly
 * what a replay will see.
 */
export function encodeValue<T>(value: T, schema: z.ZodType<T, unknown> | undefined): unknown {
  if (schema) return z.encode(schema, value);
  if (value === undefined) return null;
  assertJsonSafe(value, "$");
  return value;
}

export function decodeValue<T>(stored: unknown, schema: z.ZodType<T, unknown> | undefined): T | undefined {
  if (schema) return z.decode(schema, stored as never);
  if (stored === null) return undefined;
  return stored as T;
}

function assertJsonSafe(value: unknown, path: string): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${path} is ${value}, which JSON cannot hold`);
      return;
    case "object": {
      if (value === null) return;
      if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) assertJsonSafe(item, `${path}[${i}]`);
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(
          `${path} is a ${proto?.constructor?.name ?? "class instance"}, not a plain object`,
        );
      }
      for (const [key, item] of Object.entries(value)) assertJsonSafe(item, `${path}.${key}`);
      return;
    }
    default:
      throw new TypeError(`${path} is a ${typeof value}, which JSON cannot hold`);
  }
}

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { inputIssues, UNKNOWN_FIELD_RULE } from "../../src/engine/input-issues.js";

describe("inputIssues", () => {
  it("names every unknown field at its own path, next to the other issues", () => {
    const schema = z.object({ to: z.string(), nested: z.object({ a: z.number() }).strict() }).strict();
    const parsed = schema.safeParse({ to: 1, orgId: "x", extra: true, nested: { a: 1, b: 2 } });
    expect(parsed.success).toBe(false);
    expect(inputIssues((parsed as { error: z.ZodError }).error)).toEqual(
      expect.arrayContaining([
        { path: "to", message: expect.any(String) },
        { path: "orgId", message: UNKNOWN_FIELD_RULE },
        { path: "extra", message: UNKNOWN_FIELD_RULE },
        { path: "nested.b", message: UNKNOWN_FIELD_RULE },
      ]),
    );
  });
});

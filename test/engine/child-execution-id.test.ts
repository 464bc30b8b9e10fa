import { describe, expect, it } from "vitest";
import { z } from "zod";
import { childExecutionId } from "../../src/engine/context.js";

const PARENT = "3f2c1d9e-8b7a-4c6d-9e5f-1a2b3c4d5e6f";

describe("childExecutionId", () => {
  it("is the same for the same parent and position", () => {
    expect(childExecutionId(PARENT, 3)).toBe(childExecutionId(PARENT, 3));
  });

  it("differs between positions and between parents", () => {
    const ids = new Set<string>();
    for (let position = 0; position < 500; position++) ids.add(childExecutionId(PARENT, position));
    ids.add(childExecutionId("3f2c1d9e-8b7a-4c6d-9e5f-1a2b3c4d5e70", 0));
    expect(ids.size).toBe(501);
  });

  it("is a version 8, RFC 9562 variant UUID that the client and PostgreSQL accept", () => {
    for (let position = 0; position < 50; position++) {
      const id = childExecutionId(PARENT, position);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(z.uuid().safeParse(id).success).toBe(true);
    }
  });
});

import { describe, expect, it } from "vitest";
import { ENGINE_ERRORS } from "../../src/engine/error-codes.js";
import { defineService, provide, ServiceSet, serviceLookup } from "../../src/engine/services.js";

/** The service set and a definition's lookup over it (src/engine/services.ts). */

const clock = defineService<() => number>("test.clock");
const other = defineService<string>("test.other");
const user = { kind: "workflow", name: "test.user", version: 1, services: [clock] };

describe("a definition's service lookup", () => {
  it("returns a declared, provided service, typed by its key", () => {
    const lookup = serviceLookup("workflow", user, new ServiceSet([provide(clock, () => 42)]));
    expect(lookup.service(clock)()).toBe(42);
  });

  it("refuses a key the definition did not declare with SERVICE_NOT_DECLARED, even when provided", () => {
    const set = new ServiceSet([provide(clock, () => 42), provide(other, "x")]);
    const lookup = serviceLookup("workflow", user, set);
    expect(() => lookup.service(other)).toThrow(
      expect.objectContaining({ code: ENGINE_ERRORS.SERVICE_NOT_DECLARED, retryable: false }),
    );
  });

  it("reports a declared service this process lacks as retryable SERVICE_UNAVAILABLE", () => {
    const lookup = serviceLookup("workflow", user, ServiceSet.empty);
    expect(() => lookup.service(clock)).toThrow(
      expect.objectContaining({ code: ENGINE_ERRORS.SERVICE_UNAVAILABLE, retryable: true }),
    );
  });
});

describe("the service set", () => {
  it("refuses definitions whose declared services it lacks, naming each definition and service", () => {
    const set = new ServiceSet([provide(other, "x")]);
    expect(() => set.assertProvides([user, { name: "test.fine", services: [other] }])).toThrow(
      expect.objectContaining({
        code: ENGINE_ERRORS.SERVICE_MISSING,
        message: expect.stringContaining("workflow test.user@1 needs test.clock"),
        details: {
          missing: [{ kind: "workflow", name: "test.user@1", service: "test.clock" }],
          provided: ["test.other"],
        },
      }),
    );
  });

  it("refuses one service provided twice", () => {
    expect(() => new ServiceSet([provide(other, "a"), provide(other, "b")])).toThrow(
      expect.objectContaining({ code: ENGINE_ERRORS.SERVICE_PROVIDED_TWICE }),
    );
  });
});

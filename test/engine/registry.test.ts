import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";

const one = defineWorkflow({
  name: "unit.registry.one",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  run: async () => ({}),
});

const two = defineWorkflow({
  name: "unit.registry.two",
  version: 2,
  input: z.object({}),
  output: z.object({}),
  run: async () => ({}),
});

describe("WorkflowRegistry", () => {
  it("finds registered workflows by name", () => {
    const registry = new WorkflowRegistry([one, two]);
    expect(registry.get("unit.registry.one")).toBe(one);
    expect(registry.has("unit.registry.two")).toBe(true);
    expect(registry.names()).toEqual(["unit.registry.one", "unit.registry.two"]);
  });

  it("refuses a workflow registered twice", () => {
    expect(() => new WorkflowRegistry([one, two, one])).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_DEFINITION_INVALID",
        details: { workflow: "unit.registry.one" },
      }),
    );
  });

  it("refuses an unknown name with WORKFLOW_UNKNOWN, naming what is registered", () => {
    const registry = new WorkflowRegistry([one]);
    expect(registry.has("unit.registry.nope")).toBe(false);
    expect(() => registry.get("unit.registry.nope")).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_UNKNOWN",
        details: { workflow: "unit.registry.nope", registered: ["unit.registry.one"] },
      }),
    );
    expect(() => new WorkflowRegistry([]).get("x")).toThrow(/registered: \(none\)/);
  });

  it("refuses to run with a declared workflow missing (WORKFLOW_NOT_REGISTERED)", () => {
    expect(() => new WorkflowRegistry([one]).assertAllDeclaredRegistered()).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_NOT_REGISTERED",
        details: { missing: ["unit.registry.two"] },
      }),
    );
    expect(() => new WorkflowRegistry([one, two]).assertAllDeclaredRegistered()).not.toThrow();
  });
});

describe("defineWorkflow", () => {
  it.each(["Upper.case", "trailing.", "has space", "1digit", ""])("refuses the name %j", (name) => {
    expect(() =>
      defineWorkflow({ name, version: 1, input: z.object({}), output: z.object({}), run: async () => ({}) }),
    ).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_DEFINITION_INVALID",
        details: { field: "name", value: name },
      }),
    );
  });

  it.each([0, -1, 1.5])("refuses the version %j", (version) => {
    expect(() =>
      defineWorkflow({
        name: "unit.ok",
        version,
        input: z.object({}),
        output: z.object({}),
        run: async () => ({}),
      }),
    ).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_DEFINITION_INVALID",
        details: { field: "version", value: version },
      }),
    );
  });
});

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

const v1 = defineWorkflow({
  name: "unit.registry.versioned",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  run: async () => ({}),
});
const v3 = defineWorkflow({ ...v1, version: 3 });

describe("WorkflowRegistry", () => {
  it("finds registered workflows by name", () => {
    const registry = new WorkflowRegistry([one, two]);
    expect(registry.get("unit.registry.one")).toBe(one);
    expect(registry.has("unit.registry.two")).toBe(true);
    expect(registry.names()).toEqual(["unit.registry.one", "unit.registry.two"]);
  });

  it("refuses a workflow version registered twice", () => {
    expect(() => new WorkflowRegistry([one, two, one])).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_DEFINITION_INVALID",
        details: { workflow: "unit.registry.one", version: 1 },
      }),
    );
  });

  it("holds every version of a workflow: starts get the newest, executions their own", () => {
    const registry = new WorkflowRegistry([v3, v1]);
    expect(registry.get("unit.registry.versioned")).toBe(v3);
    expect(registry.version("unit.registry.versioned", 1)).toBe(v1);
    expect(registry.version("unit.registry.versioned", 2)).toBeUndefined();
    expect(registry.versions("unit.registry.versioned")).toEqual([1, 3]);
    expect(registry.versions("unit.registry.nope")).toEqual([]);
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
    expect(() => new WorkflowRegistry([one, v1, v3]).assertAllDeclaredRegistered()).toThrow(
      expect.objectContaining({
        code: "WORKFLOW_NOT_REGISTERED",
        details: { missing: ["unit.registry.two"] },
      }),
    );
    // A registered name with a declared version missing is named with its version.
    expect(() => new WorkflowRegistry([one, two, v3]).assertAllDeclaredRegistered()).toThrow(
      expect.objectContaining({ details: { missing: ["unit.registry.versioned@1"] } }),
    );
    expect(() => new WorkflowRegistry([one, two, v1, v3]).assertAllDeclaredRegistered()).not.toThrow();
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

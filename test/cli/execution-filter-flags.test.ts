import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/cli-io.js";
import {
  EXECUTION_FILTER_OPTIONS,
  executionFilterQuery,
  parseExecutionFilterFlags,
} from "../../src/cli/execution-filter-flags.js";

const flags = (...args: string[]) =>
  parseExecutionFilterFlags(parseArgs({ args, options: EXECUTION_FILTER_OPTIONS, strict: true }).values);

describe("the execution filter flags of tenor runs list and tenor ops create", () => {
  it("names every field as the API does, a comma-separated status as a list", () => {
    expect(
      flags(
        "--workflow",
        "demo.steps",
        "--status",
        "failed, held",
        "--code",
        "CANCELLED",
        "--key",
        "account:1",
        "--created-after",
        "2026-12-01T00:00:00Z",
        "--created-before",
        "2026-12-02T00:00:00Z",
      ),
    ).toEqual({
      workflow: "demo.steps",
      status: ["failed", "held"],
      code: "CANCELLED",
      key: "account:1",
      createdAfter: "2026-12-01T00:00:00Z",
      createdBefore: "2026-12-02T00:00:00Z",
    });
  });

  it("leaves out the flags not given, so no flag is an empty filter", () => {
    expect(flags()).toEqual({});
    expect(flags("--code", "NON_DETERMINISM")).toEqual({ code: "NON_DETERMINISM" });
  });

  it("refuses an empty value instead of sending a filter that selects nothing or everything", () => {
    expect(() => flags("--workflow", "")).toThrow(UsageError);
    expect(() => flags("--status", " ")).toThrow("--status needs a value");
  });

  it("writes the list's query with the status comma-separated", () => {
    const query = executionFilterQuery(
      flags("--status", "failed,held", "--created-after", "2026-12-01T00:00:00Z"),
    );
    expect(query.toString()).toBe("status=failed%2Cheld&createdAfter=2026-12-01T00%3A00%3A00Z");
  });
});

import { describe, expect, it } from "vitest";
import { faultsFor, parseRunName, runName } from "./faults.js";
import { pgLabel } from "./interposer.js";

describe("fault-point names", () => {
  it("a run's name round-trips, so any run printed can be replayed", () => {
    const run = { shape: "all-settled", point: "pg:tenor_append_entry#1", fault: "22P05" as const };
    expect(runName(run)).toBe("all-settled/pg:tenor_append_entry#1/22P05");
    expect(parseRunName(runName(run))).toEqual(run);
  });

  it("refuses a name that is not <shape>/<point>/<fault>, saying what it expects", () => {
    expect(() => parseRunName("all-settled/pg:tenor_append_entry/22P05")).toThrow(/<shape>\/<pg\|redis>/);
    expect(() => parseRunName("all-settled/pg:tenor_append_entry#1/kill")).toThrow(/faults: kill-before/);
  });

  it("labels an unnamed statement by its words and text, the same whichever ids it inlines", () => {
    const a = pgLabel(
      "UPDATE executions SET x = 1 WHERE id = ANY('{0b9c8a51-9a4e-4d38-8f0e-6f7b1a2c3d4e}')",
      undefined,
    );
    const b = pgLabel(
      "update  executions set x = 1\n WHERE id = ANY('{11111111-2222-4333-8444-555555555555}')",
      undefined,
    );
    expect(a).toBe(b);
    expect(a).toMatch(/^update_executions_set_x~[0-9a-f]{6}$/);
    expect(pgLabel("SELECT 1", "tenor_summaries")).toBe("tenor_summaries");
  });

  it("offers PostgreSQL faults at PostgreSQL points and Redis faults at Redis points", () => {
    expect(faultsFor("pg:commit~4015b5#1")).toContain("57P01");
    expect(faultsFor("redis:moveToFinished#1")).toEqual([
      "kill-before",
      "kill-after",
      "redis-error",
      "redis-drop",
    ]);
  });
});

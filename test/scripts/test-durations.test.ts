import { describe, expect, it } from "vitest";
import { slowestFiles } from "../../scripts/test-durations.js";

describe("the test durations report", () => {
  it("lists the slowest files first with their share of the file time, cut at the count", () => {
    const file = (name: string, seconds: number, status = "passed") => ({
      name: `/repo/test/${name}`,
      startTime: 1_000,
      endTime: 1_000 + seconds * 1000,
      status,
    });
    const lines = slowestFiles(
      { testResults: [file("a.test.ts", 10), file("b.int.test.ts", 30, "failed"), file("c.test.ts", 60)] },
      2,
      "/repo",
    );
    expect(lines).toEqual([
      "3 files, 100 s of file time",
      "    60.0 s  60.0 %  passed  test/c.test.ts",
      "    30.0 s  30.0 %  failed  test/b.int.test.ts",
    ]);
  });
});

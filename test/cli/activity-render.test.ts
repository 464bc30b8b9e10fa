import { describe, expect, it } from "vitest";
import { type ActivityBody, renderActivity } from "../../src/cli/activity-render.js";

const base: ActivityBody = {
  payloadsIncluded: true,
  input: { bytes: 2, sha256: "a".repeat(64), value: {} },
  output: null,
  parent: null,
  children: { items: [], more: null },
  signals: [],
  votes: [],
  auditIncluded: true,
  audit: [],
};

describe("tenor runs get's activity", () => {
  it("lists the run's audit entries: when, action, who, target and outcome", () => {
    const text = renderActivity({
      ...base,
      audit: [
        {
          at: "2026-12-02T09:00:00.000Z",
          action: "execution.signal",
          subject: "alice",
          role: "operator",
          target: "0b6c/signals/note",
          outcome: "accepted",
        },
        {
          at: "2026-12-02T09:01:00.000Z",
          action: "execution.resume",
          subject: "bob",
          role: "admin",
          target: "0b6c",
          outcome: "EXECUTION_NOT_SUSPENDED",
        },
      ],
    });
    expect(text).toContain(
      "audit:\n  - 2026-12-02T09:00:00.000Z execution.signal by alice (operator) on 0b6c/signals/note: accepted\n" +
        "  - 2026-12-02T09:01:00.000Z execution.resume by bob (admin) on 0b6c: EXECUTION_NOT_SUSPENDED\n",
    );
  });

  it("says when there are none, and who may read them to a key that may not", () => {
    expect(renderActivity(base)).toContain("audit: none\n");
    expect(renderActivity({ ...base, auditIncluded: false })).toContain("audit: (for operator and admin)\n");
  });
});

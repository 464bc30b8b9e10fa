import { describe, expect, it } from "vitest";
import { labelViolations, sampleValue } from "./metric-labels.js";

/** The allow-list checker itself: it must catch what the scrape test relies on it to catch. */
describe("labelViolations", () => {
  it("accepts bounded labels", () => {
    const text = [
      "# HELP tenor_api_requests_total x",
      'tenor_api_requests_total{method="GET",route="/v1/executions/:id",status="200",role="api"} 3',
      'tenor_step_duration_seconds_bucket{le="0.005",workflow="demo.asset-issue",role="runner"} 1',
    ].join("\n");
    expect(labelViolations(text)).toEqual([]);
    expect(sampleValue(text, "tenor_api_requests_total", { status: "200" })).toBe(3);
  });

  it.each([
    [
      "an execution id in a route",
      'x{route="/v1/executions/0b7f6a52-27c5-4c1e-9d0e-1f1a1a1a1a1a"} 1',
      "route=",
    ],
    ["an unregistered workflow", 'x{workflow="org-42.custom"} 1', "workflow="],
    ["a hash as a label", 'x{status="200",hash="ab12"} 1', "label hash is not on the allow-list"],
    ["a key as a space", 'x{space="asset:XYZ"} 1', "space="],
    ["a long hex value anywhere", 'x{type="deadbeefdeadbeefdeadbeef"} 1', "looks like an id"],
  ])("flags %s", (_name, line, expected) => {
    expect(labelViolations(line).join("\n")).toContain(expected);
  });
});

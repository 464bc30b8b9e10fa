import { describe, expect, it } from "vitest";
import { tracingSummary } from "../../src/config/telemetry.js";

describe("the startup line about tracing", () => {
  it("says on with the exporter and the endpoint the SDK exports to, or off and why", () => {
    expect(tracingSummary({})).toMatchObject({
      tracing: "off",
      reason: expect.stringContaining("no exporter"),
    });
    expect(tracingSummary({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({
      tracing: "on",
      exporters: "otlp",
      endpoint: "http://collector:4318",
    });
    expect(
      tracingSummary({
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/v1/traces",
      }).endpoint,
    ).toBe("http://b:4318/v1/traces");
    expect(tracingSummary({ OTEL_TRACES_EXPORTER: "console" })).toEqual({
      tracing: "on",
      exporters: "console",
    });
    expect(tracingSummary({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" })).toMatchObject({
      tracing: "off",
      reason: "OTEL_SDK_DISABLED=true",
    });
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { resolveTelemetrySettings } from "../../src/config/telemetry.js";

describe("telemetry settings", () => {
  it("is off unless an exporter or an OTLP endpoint is configured", () => {
    expect(resolveTelemetrySettings({})).toBeNull();
    expect(resolveTelemetrySettings({ OTEL_TRACES_EXPORTER: "none" })).toBeNull();
    expect(
      resolveTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_SDK_DISABLED: "true",
      }),
    ).toBeNull();
  });

  it("is on with an endpoint or an exporter, with the commit or `unknown`", () => {
    expect(resolveTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({
      commit: "unknown",
    });
    expect(resolveTelemetrySettings({ OTEL_TRACES_EXPORTER: "console", TENOR_COMMIT: "2b6b5bd" })).toEqual({
      commit: "2b6b5bd",
    });
    expect(
      resolveTelemetrySettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector/v1/traces" }),
    ).not.toBeNull();
  });

  it("names every invalid variable with its value and rule", () => {
    let error: unknown;
    try {
      resolveTelemetrySettings({
        OTEL_TRACES_EXPORTER: "jaeger",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http",
        OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
        OTEL_SDK_DISABLED: "yes",
        TENOR_COMMIT: "main",
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.key)).toEqual([
      "OTEL_TRACES_EXPORTER",
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_SDK_DISABLED",
      "TENOR_COMMIT",
    ]);
    expect((error as ConfigError).message).toContain(
      'OTEL_TRACES_EXPORTER = "jaeger": each of otlp, console, none',
    );
  });
});

import { ConfigError, type ConfigIssue } from "./config-error.js";

/**
 * Tracing settings from the standard OpenTelemetry variables (docs/operations.md, "Traces").
 * Tracing is off unless an exporter is configured: `OTEL_TRACES_EXPORTER` (otlp or console), or an
 * OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). The SDK
 * reads the remaining `OTEL_*` variables itself (sampler, batch delays, headers); the ones it
 * would silently ignore or misread when wrong are validated here first.
 */
export interface TelemetrySettings {
  /** Deployment identity on the resource: `TENOR_COMMIT`, else `unknown`. */
  commit: string;
}

const EXPORTERS = ["otlp", "console", "none"] as const;
const PROTOCOLS = ["grpc", "http/protobuf", "http/json"] as const;
const COMMIT = /^[0-9a-f]{7,40}$/;

/** Null when tracing is off; throws ConfigError naming every invalid variable. */
export function resolveTelemetrySettings(
  env: Readonly<Record<string, string | undefined>>,
): TelemetrySettings | null {
  const issues: ConfigIssue[] = [];
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of exporters) {
    if (!(EXPORTERS as readonly string[]).includes(name))
      issues.push({
        key: "OTEL_TRACES_EXPORTER",
        value: env.OTEL_TRACES_EXPORTER,
        rule: `each of ${EXPORTERS.join(", ")}`,
      });
  }
  for (const key of ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) {
    const value = env[key];
    if (value !== undefined && !(PROTOCOLS as readonly string[]).includes(value))
      issues.push({ key, value, rule: `one of ${PROTOCOLS.join(", ")}` });
  }
  for (const key of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
    const value = env[key];
    if (value !== undefined && !/^https?:\/\/[^\s]+$/.test(value))
      issues.push({ key, value, rule: "an http:// or https:// URL" });
  }
  const disabled = env.OTEL_SDK_DISABLED;
  if (disabled !== undefined && !["true", "false"].includes(disabled))
    issues.push({ key: "OTEL_SDK_DISABLED", value: disabled, rule: "true or false" });
  const commit = env.TENOR_COMMIT;
  if (commit !== undefined && !COMMIT.test(commit))
    issues.push({
      key: "TENOR_COMMIT",
      value: commit,
      rule: "a git commit hash, 7 to 40 lowercase hex digits",
    });
  if (issues.length > 0) throw new ConfigError(issues);

  if (disabled === "true") return null;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const exporting = exporters.length > 0 ? exporters.some((name) => name !== "none") : endpoint !== undefined;
  if (!exporting) return null;
  return { commit: commit ?? "unknown" };
}

/** What the startup line says about tracing: on with its exporters and endpoint, or off and why. */
export interface TracingSummary {
  tracing: "on" | "off";
  exporters?: string;
  endpoint?: string;
  reason?: string;
}

/**
 * The tracing state `env` gives (the same rule as {@link resolveTelemetrySettings}), for the one
 * line every role logs at start. The endpoint is the SDK's: the traces endpoint when set, else the
 * OTLP base endpoint, else the SDK default `http://localhost:4318`.
 */
export function tracingSummary(env: Readonly<Record<string, string | undefined>>): TracingSummary {
  let settings: TelemetrySettings | null;
  try {
    settings = resolveTelemetrySettings(env);
  } catch {
    return { tracing: "off", reason: "invalid OTEL_* variables" };
  }
  if (env.OTEL_SDK_DISABLED === "true") return { tracing: "off", reason: "OTEL_SDK_DISABLED=true" };
  if (!settings)
    return {
      tracing: "off",
      reason: "no exporter configured (OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT)",
    };
  const exporters = env.OTEL_TRACES_EXPORTER?.trim() || "otlp";
  const otlp = exporters.split(",").some((name) => name.trim() === "otlp");
  return {
    tracing: "on",
    exporters,
    ...(otlp
      ? {
          endpoint:
            env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
            env.OTEL_EXPORTER_OTLP_ENDPOINT ??
            "http://localhost:4318",
        }
      : {}),
  };
}

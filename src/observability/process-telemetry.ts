import { ConfigError } from "../config/config-error.js";
import { parseRole } from "../config/role.js";
import { resolveTelemetrySettings } from "../config/telemetry.js";
import type { TelemetryHandle } from "./telemetry.js";

/** Longest wait for the last spans at exit, in ms: an unreachable collector must not hold the exit. */
const EXPORT_AT_EXIT_MS = 2_000;

/**
 * Tracing for a role process, started before the role's modules load (see startTelemetry). The
 * SDK is imported only when tracing is on: it takes most of a second to load.
 * Returns a handle whose `flushThen` exports what is buffered (at most EXPORT_AT_EXIT_MS) before
 * an exit; a no-op handle when tracing is off or the role is invalid (the role process reports
 * that). Invalid `OTEL_*` variables are reported with the key, the value and the rule.
 */
export async function startProcessTelemetry(
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ flushThen(exit: () => void): void } | ConfigError> {
  let handle: TelemetryHandle | undefined;
  let settings: ReturnType<typeof resolveTelemetrySettings>;
  try {
    settings = resolveTelemetrySettings(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  if (settings) {
    const { startTelemetry } = await import("./telemetry.js");
    handle = startTelemetry(roleOrUnknown(env.DAPI_ROLE), settings);
  }
  return {
    flushThen(exit) {
      if (!handle) return exit();
      const timer = setTimeout(exit, EXPORT_AT_EXIT_MS);
      void handle.shutdown().finally(() => {
        clearTimeout(timer);
        exit();
      });
    },
  };
}

function roleOrUnknown(value: string | undefined): string {
  try {
    return parseRole(value);
  } catch {
    return "unknown";
  }
}

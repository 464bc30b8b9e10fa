import { createRequire } from "node:module";
import { ExpressInstrumentation } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeSDK } from "@opentelemetry/sdk-node";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { TelemetrySettings } from "../config/telemetry.js";
import { setTracingEnabled } from "./tracing-state.js";

export interface TelemetryHandle {
  /** Exports what is buffered and stops; safe to call twice. */
  shutdown(): Promise<void>;
}

/** Health and metrics paths: never traced. */
const PROBE_PATHS = new Set(["/livez", "/readyz", "/metrics"]);

/**
 * Starts OpenTelemetry tracing for one role process: resource `service.name = tenor-<role>`, the
 * package version and `vcs.ref.head.revision` (the commit), HTTP, Express and pg instrumentations,
 * and the exporter the `OTEL_*` variables name (the SDK reads them). Call before the role's modules
 * load, so the instrumentations see `http`, `express` and `pg` when they are first required.
 * `spanProcessors` replaces the exporter from the environment (tests pass an in-memory exporter).
 */
export function startTelemetry(
  role: string,
  settings: TelemetrySettings,
  options: { spanProcessors?: SpanProcessor[] } = {},
): TelemetryHandle {
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: `tenor-${role}`,
      [ATTR_SERVICE_VERSION]: packageVersion(),
      "vcs.ref.head.revision": settings.commit,
    }),
    instrumentations: [
      // Probes and scrapes every few seconds would bury the requests people look for.
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => PROBE_PATHS.has(req.url?.split("?")[0] ?? ""),
      }),
      new ExpressInstrumentation(),
      // Queries outside a trace (sweeps, schedule ticks, keyed repair) would each start a trace.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
  });
  sdk.start();
  setTracingEnabled(true);
  let stopped: Promise<void> | undefined;
  return {
    shutdown() {
      stopped ??= sdk.shutdown().finally(() => {
        setTracingEnabled(false);
      });
      return stopped;
    },
  };
}

/** package.json's version: from the source tree and from dist/ alike (two levels up from either). */
function packageVersion(): string {
  const require = createRequire(import.meta.url);
  for (const path of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = require(path) as { name?: string; version?: string };
      if (pkg.name === "tenor" && pkg.version) return pkg.version;
    } catch {
      // Not at this depth: try the next.
    }
  }
  return "unknown";
}

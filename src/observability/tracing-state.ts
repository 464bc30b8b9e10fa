/**
 * Whether this process traces, kept apart from the SDK (src/observability/telemetry.ts) so that
 * modules asking do not load it: the SDK and its instrumentations take most of a second to import.
 */

/** The name of our own tracer (engine, runtime, store spans): an instrumentation scope of its own. */
export const TENOR_TRACER = "tenor";

let tracingStarted = false;

/** True once this process started an OpenTelemetry SDK: BullMQ telemetry and engine spans turn on. */
export function isTracingEnabled(): boolean {
  return tracingStarted;
}

/** Called by startTelemetry and its shutdown. */
export function setTracingEnabled(enabled: boolean): void {
  tracingStarted = enabled;
}

import { isSpanContextValid, trace } from "@opentelemetry/api";
import winston from "winston";
import { REDACTED, redactValue, SECRET_FIELD } from "../errors/redact.js";

/** The closed list of components a log line may come from (style rule 6). */
export const LOG_COMPONENTS = [
  "main",
  "config",
  "health",
  "api",
  "runner",
  "indexer",
  "engine",
  "queue",
  "store",
  "sweep",
  "ownership",
  "schedules",
  "retention",
  "monitoring",
  "supervisor",
  "demo",
  "telemetry",
  "webhooks",
] as const;
export type LogComponent = (typeof LOG_COMPONENTS)[number];

/**
 * The closed list of categories: every line carries one, so an operator filters a subsystem with
 * one equality whatever component inside it logged. A line logged without a component (or with a
 * category outside this list) is filed under `dapi.process`.
 */
export const LOG_CATEGORIES = [
  "dapi.process",
  "dapi.config",
  "dapi.api",
  "dapi.engine",
  "dapi.queue",
  "dapi.store",
  "dapi.ownership",
  "dapi.schedules",
  "dapi.retention",
  "dapi.indexer",
  "dapi.telemetry",
  "dapi.webhooks",
] as const;
export type LogCategory = (typeof LOG_CATEGORIES)[number];

/** Which category each component's lines fall under. */
export const CATEGORY_OF_COMPONENT: Readonly<Record<LogComponent, LogCategory>> = {
  main: "dapi.process",
  config: "dapi.config",
  health: "dapi.process",
  api: "dapi.api",
  runner: "dapi.engine",
  indexer: "dapi.indexer",
  engine: "dapi.engine",
  queue: "dapi.queue",
  store: "dapi.store",
  sweep: "dapi.engine",
  ownership: "dapi.ownership",
  schedules: "dapi.schedules",
  retention: "dapi.retention",
  monitoring: "dapi.schedules",
  supervisor: "dapi.process",
  demo: "dapi.process",
  telemetry: "dapi.telemetry",
  webhooks: "dapi.webhooks",
};

/** The category of a line: the one it names when that is in the list, else its component's. */
export function logCategoryOf(fields: Record<string, unknown>): LogCategory {
  if ((LOG_CATEGORIES as readonly unknown[]).includes(fields.category)) return fields.category as LogCategory;
  const component = fields.component as LogComponent | undefined;
  return (component !== undefined && CATEGORY_OF_COMPONENT[component]) || "dapi.process";
}

/** Fields a scoped child logger may carry; never payloads, secrets or keys of workflows. */
export interface LogScope {
  component: LogComponent;
  executionId?: string;
  workflow?: string;
  step?: string;
  queue?: string;
  jobId?: string;
  role?: string;
}

export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  child(scope: Partial<LogScope>): Logger;
}

export interface CreateLoggerOptions {
  level?: "error" | "warn" | "info" | "debug";
  /** Where JSON lines go; defaults to stdout. Tests pass a stream to read them back. */
  stream?: NodeJS.WritableStream;
  /** Fields on every line (role, pid). */
  base?: Record<string, unknown>;
  /**
   * `json`: one object per line, for collectors. `text`: one readable line for a person at a
   * terminal. `auto` (default): `text` when the output stream is a TTY, else `json`.
   */
  format?: LogFormat;
}

export type LogFormat = "json" | "text" | "auto";

/** The format `auto` resolves to for a stream: readable only when a person is watching it. */
export function resolveLogFormat(format: LogFormat, stream: object): "json" | "text" {
  if (format !== "auto") return format;
  return (stream as { isTTY?: unknown }).isTTY === true ? "text" : "json";
}

/**
 * Every line passes through here before it is written, whatever the call site logged: the message
 * and every field are redacted (src/errors/redact.ts), so a secret cannot reach the output.
 */
const redactLine = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === "level") continue;
    info[key] = SECRET_FIELD.test(key) ? REDACTED : redactValue(info[key]);
  }
  return info;
});

const assignCategory = winston.format((info) => {
  info.category = logCategoryOf(info);
  return info;
});

/** Fields the text line prints in its head, so they are not repeated after the message. */
const TEXT_HEAD = new Set(["level", "message", "timestamp", "category", "component", "pid", "role"]);

/**
 * `2026-11-30T06:55:48.123Z INFO  dapi.engine [runner/engine] turn started executionId=… turn=3`:
 * the head a person scans first, then the remaining fields as key=value (objects as JSON).
 */
const textLine = winston.format.printf((info) => {
  const scope = [info.role, info.component].filter((part) => part !== undefined).join("/");
  const head = `${String(info.timestamp)} ${info.level.toUpperCase().padEnd(5)} ${String(info.category)}${scope ? ` [${scope}]` : ""} ${String(info.message)}`;
  const rest = Object.keys(info)
    .filter((key) => !TEXT_HEAD.has(key))
    .map((key) => `${key}=${formatTextValue(info[key])}`);
  return rest.length > 0 ? `${head} ${rest.join(" ")}` : head;
});

function formatTextValue(value: unknown): string {
  if (typeof value === "string") return /\s/.test(value) ? JSON.stringify(value) : value;
  if (value instanceof Error) return JSON.stringify(value.stack ?? value.message);
  return JSON.stringify(value) ?? String(value);
}

/**
 * Structured logs with a `component` from LOG_COMPONENTS and a `category` from LOG_CATEGORIES: JSON
 * lines, or readable text lines at a terminal (`format`). Secrets are redacted from every line (URL
 * passwords, Authorization credentials, API keys, secret-named fields).
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const transport = options.stream
    ? new winston.transports.Stream({ stream: options.stream })
    : new winston.transports.Console();
  const format = resolveLogFormat(options.format ?? "auto", options.stream ?? process.stdout);
  const root = winston.createLogger({
    level: options.level ?? "info",
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      assignCategory(),
      redactLine(),
      format === "text" ? textLine : winston.format.json(),
    ),
    defaultMeta: { pid: process.pid, ...options.base },
    transports: [transport],
  });
  return wrap(root);
}

function wrap(inner: winston.Logger): Logger {
  return {
    error: (message, fields) => inner.error(message, withTrace(fields)),
    warn: (message, fields) => inner.warn(message, withTrace(fields)),
    info: (message, fields) => inner.info(message, withTrace(fields)),
    debug: (message, fields) => inner.debug(message, withTrace(fields)),
    child: (scope) => wrap(inner.child(scope)),
  };
}

/**
 * `fields` with `traceId` and `spanId` of the span active where the line is logged (read at the
 * call, before winston's stream), so a line written inside a traced operation (a request, a turn, a
 * step) finds its trace. Nothing is added outside a trace or when tracing is off.
 */
function withTrace(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  if (!span || !isSpanContextValid(span)) return fields;
  return { ...fields, traceId: span.traceId, spanId: span.spanId };
}

/**
 * Republishes Node's process `warning` events (deprecations, MaxListeners, experimental
 * features) as structured logs under the stable category `dapi.process`, instead of raw stderr.
 * Returns a function that removes the listener.
 */
export function republishProcessWarnings(logger: Logger, target: NodeJS.Process = process): () => void {
  const listener = (warning: Error & { code?: string }) => {
    logger.warn(warning.message, {
      category: "dapi.process",
      warningName: warning.name,
      warningCode: warning.code,
    });
  };
  target.on("warning", listener);
  return () => target.off("warning", listener);
}

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
] as const;
export type LogComponent = (typeof LOG_COMPONENTS)[number];

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
}

/**
 * Every line passes through here before it is written, whatever the call site logged: the message
 * and every field are redacted (src/observability/redact.ts), so a secret cannot reach the output.
 */
const redactLine = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === "level") continue;
    info[key] = SECRET_FIELD.test(key) ? REDACTED : redactValue(info[key]);
  }
  return info;
});

/**
 * Structured JSON logs, one object per line, with a `component` from LOG_COMPONENTS. Secrets are
 * redacted from every line (URL passwords, Authorization credentials, API keys, secret-named fields).
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const transport = options.stream
    ? new winston.transports.Stream({ stream: options.stream })
    : new winston.transports.Console();
  const root = winston.createLogger({
    level: options.level ?? "info",
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      redactLine(),
      winston.format.json(),
    ),
    defaultMeta: { pid: process.pid, ...options.base },
    transports: [transport],
  });
  return wrap(root);
}

function wrap(inner: winston.Logger): Logger {
  return {
    error: (message, fields) => inner.error(message, fields),
    warn: (message, fields) => inner.warn(message, fields),
    info: (message, fields) => inner.info(message, fields),
    debug: (message, fields) => inner.debug(message, fields),
    child: (scope) => wrap(inner.child(scope)),
  };
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

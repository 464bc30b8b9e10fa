import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { ConfigError, type ConfigIssue } from "./config-error.js";
import { configSchema, REMOVED_KEYS, type TenorConfig } from "./schema.js";

/** Environment variables Tenor reads, and the config key each one sets. Env wins over the file. */
export const ENV_KEYS: Readonly<Record<string, string>> = Object.freeze({
  DATABASE_URL: "databaseUrl",
  REDIS_URL: "redisUrl",
  TENOR_REDIS_PREFIX: "redisPrefix",
  TENOR_REDIS_CLUSTER: "redisCluster",
  TENOR_LOG_LEVEL: "logLevel",
  TENOR_API_PORT: "api.port",
  TENOR_API_HEALTH_PORT: "api.healthPort",
  TENOR_RUNNER_HEALTH_PORT: "runner.healthPort",
  TENOR_INDEXER_HEALTH_PORT: "indexer.healthPort",
  TENOR_DATABASE_POOL_MAX: "database.poolMax",
  TENOR_DATABASE_SESSION_URL: "database.sessionUrl",
  TENOR_DATABASE_NAMED_STATEMENTS: "database.namedStatements",
  TENOR_STARTUP_RELAUNCH_BUDGET_MS: "startup.relaunchBudgetMs",
});

/** Path of the optional YAML file, nested keys as in README, "Configuration". */
export const CONFIG_FILE_ENV = "TENOR_CONFIG";

export interface LoadConfigOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** Injected so tests need no file system; defaults to reading UTF-8 from disk. */
  readFile?: (path: string) => string;
}

/**
 * Parses the configuration once: YAML file (when TENOR_CONFIG names one), then environment
 * overrides, then the schema. Returns a deeply frozen object or throws one ConfigError listing
 * every violation with its key, value and rule.
 */
export function loadConfig(options: LoadConfigOptions): TenorConfig {
  const raw = readConfigFile(options);
  for (const [envName, key] of Object.entries(ENV_KEYS)) {
    const value = options.env[envName];
    if (value !== undefined && value !== "") setPath(raw, key, value);
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(toIssues(parsed.error, raw));
  return deepFreeze(parsed.data);
}

function readConfigFile(options: LoadConfigOptions): Record<string, unknown> {
  const path = options.env[CONFIG_FILE_ENV];
  if (path === undefined || path === "") return {};
  const read = options.readFile ?? ((p: string) => readFileSync(p, "utf8"));
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    throw new ConfigError([
      { key: CONFIG_FILE_ENV, value: path, rule: `must name a readable file (${(error as Error).message})` },
    ]);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new ConfigError([
      { key: CONFIG_FILE_ENV, value: path, rule: `must be valid YAML (${(error as Error).message})` },
    ]);
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== "object" || Array.isArray(document)) {
    throw new ConfigError([
      { key: CONFIG_FILE_ENV, value: path, rule: "must contain a YAML mapping at the top level" },
    ]);
  }
  return document as Record<string, unknown>;
}

function toIssues(error: z.ZodError, raw: Record<string, unknown>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const unknownKey of issue.keys) {
        const key = base ? `${base}.${unknownKey}` : unknownKey;
        const rule = REMOVED_KEYS[key] ?? "is not a known configuration key";
        issues.push({ key, value: getPath(raw, key), rule });
      }
      continue;
    }
    issues.push({ key: envHint(base), value: getPath(raw, base), rule: issue.message });
  }
  return issues;
}

/** Names the environment variable too, when one sets this key, so the operator knows where to look. */
function envHint(key: string): string {
  const envName = Object.entries(ENV_KEYS).find(([, k]) => k === key)?.[0];
  return envName ? `${key} (${envName})` : key;
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1) as string] = value;
}

function getPath(source: unknown, dotted: string): unknown {
  if (dotted === "") return undefined;
  let node: unknown = source;
  for (const part of dotted.split(".")) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

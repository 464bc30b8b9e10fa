import { issueApiKey } from "../src/api/auth/api-key.js";
import { loadConfig } from "../src/config/load-config.js";
import { POSTGRES_START_HINT } from "../src/store/migrations/migration-error.js";
import { PgApiKeys } from "../src/store/pg-api-keys.js";
import { createPgPool } from "../src/store/pg-pool.js";
import { redactUrl } from "../src/transport/redis-connection.js";
import { withQuickStartDefaults } from "./dev-defaults.js";

/**
 * What the demos share: API keys for organisation "demo" issued with the same function as
 * `npm run tenor -- keys create` (one per role, each its own person), and a small client of the
 * running api role's Platform API that throws with the problem's code on an error status. The
 * connection URLs default as the quick start's do (scripts/dev-defaults.ts).
 */
export type DemoRole = "integrator" | "approver" | "operator";

export type DemoCall = (
  method: string,
  path: string,
  key: string,
  body?: unknown,
  headers?: Record<string, string>,
  // biome-ignore lint/suspicious/noExplicitAny: the demo prints what the API answers.
) => Promise<{ status: number; json: any; location: string | null }>;

export interface DemoClient {
  keys: Record<DemoRole, string>;
  call: DemoCall;
}

export async function demoClient(): Promise<DemoClient> {
  const config = loadConfig({ env: withQuickStartDefaults(process.env) });
  const pool = createPgPool(config.databaseUrl, { applicationName: "tenor-demo", max: 2 });
  const store = new PgApiKeys(pool);
  const issue = async (role: DemoRole) =>
    (await issueApiKey(store, { orgId: "demo", role, name: `demo-${role}`, subject: `demo-${role}` })).key;
  try {
    const keys = {
      integrator: await issue("integrator"),
      approver: await issue("approver"),
      operator: await issue("operator"),
    };
    return { keys, call: demoCaller(`http://127.0.0.1:${config.api.port}`) };
  } catch (error) {
    throw new Error(
      `cannot issue the demo's API keys in PostgreSQL at ${redactUrl(config.databaseUrl)} (${(error as Error).message}); run the quick start first (npm run quickstart). ${POSTGRES_START_HINT}`,
    );
  } finally {
    await pool.end();
  }
}

/** How many 503 answers a call waits out before it gives up, and the longest wait it accepts, in s. */
const OVERLOAD_RETRIES = 10;
const MAX_RETRY_AFTER_SECONDS = 30;

/**
 * A Platform API call against `base`. A 503 with `Retry-After` (the api's admission refusing at
 * once, before doing anything: docs/operations.md, "Overload") is waited out and sent again, up to
 * {@link OVERLOAD_RETRIES} times; any other error status throws with the problem's code.
 */
export function demoCaller(
  base: string,
  sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
): DemoCall {
  return async (method, path, key, body, headers = {}) => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const wait = res.status === 503 ? retryAfterMs(res.headers.get("retry-after")) : null;
      if (wait !== null && attempt < OVERLOAD_RETRIES) {
        await res.body?.cancel();
        await sleep(wait);
        continue;
      }
      // biome-ignore lint/suspicious/noExplicitAny: the demo prints what the API answers.
      const json = (await res.json()) as any;
      if (res.status >= 400)
        throw new Error(`${method} ${path} answered ${res.status}: ${json.code}: ${json.detail}`);
      return { status: res.status, json, location: res.headers.get("location") };
    }
  };
}

/** `Retry-After` in ms: delay-seconds or an HTTP date, capped; null when absent or unreadable. */
export function retryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) : (Date.parse(header) - Date.now()) / 1000;
  if (!Number.isFinite(seconds)) return null;
  return Math.round(Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_SECONDS) * 1000);
}

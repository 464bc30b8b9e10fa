import { issueApiKey } from "../src/api/auth/api-key.js";
import { loadConfig } from "../src/config/load-config.js";
import { PgApiKeys } from "../src/store/pg-api-keys.js";
import { createPgPool } from "../src/store/pg-pool.js";

/**
 * What the demos share: API keys for organisation "demo" issued with the same function as
 * `npm run tenor -- keys create` (one per role, each its own person), and a small client of the
 * running api role's Platform API that throws with the problem's code on an error status.
 */
export type DemoRole = "integrator" | "approver" | "operator";

export interface DemoClient {
  keys: Record<DemoRole, string>;
  call(
    method: string,
    path: string,
    key: string,
    body?: unknown,
    headers?: Record<string, string>,
    // biome-ignore lint/suspicious/noExplicitAny: the demo prints what the API answers.
  ): Promise<{ status: number; json: any; location: string | null }>;
}

export async function demoClient(): Promise<DemoClient> {
  const config = loadConfig({ env: process.env });
  const base = `http://127.0.0.1:${config.api.port}`;
  const pool = createPgPool(config.databaseUrl, { applicationName: "tenor-demo", max: 2 });
  const store = new PgApiKeys(pool);
  const issue = async (role: DemoRole) =>
    (await issueApiKey(store, { orgId: "demo", role, name: `demo-${role}`, subject: `demo-${role}` })).key;
  const keys = {
    integrator: await issue("integrator"),
    approver: await issue("approver"),
    operator: await issue("operator"),
  };
  await pool.end();
  return {
    keys,
    async call(method, path, key, body, headers = {}) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the demo prints what the API answers.
      const json = (await res.json()) as any;
      if (res.status >= 400)
        throw new Error(`${method} ${path} answered ${res.status}: ${json.code}: ${json.detail}`);
      return { status: res.status, json, location: res.headers.get("location") };
    },
  };
}

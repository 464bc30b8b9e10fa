import type { Express } from "express";
import type { Pool } from "pg";
import request from "supertest";
import { issueApiKey } from "../../src/api/auth/api-key.js";
import type { KeysCommandStores } from "../../src/cli/keys-command.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { PgAudit } from "../../src/store/pg-audit.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

type KeyStore = Parameters<typeof issueApiKey>[0];
type KeyRole = Parameters<typeof issueApiKey>[1]["role"];

/** Who a test key belongs to: its organisation (null: the platform's), role and person. */
export interface TestPrincipal {
  org: string | null;
  role: KeyRole;
  /** The person behind the key; default the principal's own name (each is its own person). */
  subject?: string;
}

/** Issues one API key per principal, named after it; returns the bearer keys and their record ids. */
export async function issueTestKeys<Name extends string>(
  store: KeyStore,
  principals: Record<Name, TestPrincipal>,
): Promise<{ keys: Record<Name, string>; keyIds: Record<Name, string> }> {
  const keys = {} as Record<Name, string>;
  const keyIds = {} as Record<Name, string>;
  for (const [name, p] of Object.entries(principals) as [Name, TestPrincipal][]) {
    const issued = await issueApiKey(store, { orgId: p.org, role: p.role, name, subject: p.subject ?? name });
    keys[name] = issued.key;
    keyIds[name] = issued.record.id;
  }
  return { keys, keyIds };
}

/** supertest requests against an app in the test process, sent with a principal's key. */
export type AppClient<Name extends string> = (principal: Name) => {
  get(url: string): request.Test;
  post(url: string): request.Test;
  put(url: string): request.Test;
};

export function appClient<Name extends string>(app: Express, keys: Record<Name, string>): AppClient<Name> {
  return (principal) => ({
    get: (url) => request(app).get(url).set("authorization", `Bearer ${keys[principal]}`),
    post: (url) => request(app).post(url).set("authorization", `Bearer ${keys[principal]}`),
    put: (url) => request(app).put(url).set("authorization", `Bearer ${keys[principal]}`),
  });
}

/** Calls an API over HTTP as `principal`; answers status and JSON body. */
export type HttpClient<Name extends string> = (
  principal: Name,
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Json }>;

/** HTTP calls to the API at `base` (a real listening server), sent with a principal's key. */
export function httpClient<Name extends string>(base: string, keys: Record<Name, string>): HttpClient<Name> {
  return async (principal, method, urlPath, body) => {
    const res = await fetch(`${base}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${keys[principal]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
}

/** The stores `tenor keys` writes, over a test's pool (the CLI's entry builds the same). */
export function keysCommandStores(pool: Pool): KeysCommandStores {
  return { keys: new PgApiKeys(pool), audit: new PgAudit(pool) };
}

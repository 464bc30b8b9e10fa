import { generateKeyPairSync, type KeyObject } from "node:crypto";
import type { Pool } from "pg";
import { PgApiKeys } from "../../../src/store/pg-api-keys.js";
import { type HttpClient, httpClient, issueTestKeys, type TestPrincipal } from "../../support/api-client.js";
import { writeTestConfig } from "../../support/config-file.js";
import type { TestDatabase } from "../../support/database.js";
import { freePort } from "../../support/processes.js";
import { eventually, type RoleProcess, roleReady, spawnRole } from "../../support/role-process.js";
import { createTestStores } from "../../support/test-stores.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/**
 * The principals the console and CLI tests act as, each its own person: of org `demo`, and of the
 * platform (the schedules' operators).
 */
const PEOPLE = {
  integrator: { org: "demo", role: "integrator" },
  approver: { org: "demo", role: "approver" },
  operator: { org: "demo", role: "operator" },
  platformOperator: { org: null, role: "platform-operator" },
  platformAdmin: { org: null, role: "platform-admin" },
} as const satisfies Record<string, TestPrincipal>;
export type Person = keyof typeof PEOPLE;

/**
 * The real api and runner roles (workers/main.ts, the release's workflows) on a database and Redis
 * prefix of the test file's own, with an evidence signing key configured, and API keys of org
 * `demo` for an integrator, an approver and an operator.
 */
export interface RolesHarness {
  db: TestDatabase;
  pool: Pool;
  /** The api's base URL (http://127.0.0.1:<port>). */
  base: string;
  /** DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX and TENOR_API_URL of this deployment. */
  env: Record<string, string>;
  prefix: string;
  keys: Record<Person, string>;
  /** The public half of the evidence signing key. */
  evidencePublicKey: KeyObject;
  /** Calls the API as `person`; answers status and JSON body. */
  call: HttpClient<Person>;
  /** Starts `demo.asset-issue` as the integrator; returns its id. */
  startDemo(input: Record<string, unknown>): Promise<string>;
  /**
   * Starts `demo.asset-issue` once per symbol, asking a 10-minute approval, and waits until each
   * waits for it: runs that hold still for bulk actions. Returns their ids in order.
   */
  startDemosAwaitingApproval(symbols: readonly string[]): Promise<string[]>;
  /** Polls the execution until `predicate` holds. */
  waitFor(id: string, predicate: (e: Json) => boolean, what: string): Promise<Json>;
  /** Kills the runner role with SIGKILL and starts a new one on the same configuration; waits until it is ready. */
  restartRunner(): Promise<void>;
  /** Kills the runner role with SIGKILL and waits for its exit; `restartRunner` starts one again. */
  killRunner(): Promise<void>;
  /** The running runner's process id. */
  runnerPid(): number;
  stop(): Promise<void>;
}

/** How a test file's roles differ from the defaults. */
export interface RolesHarnessOptions {
  /**
   * Refuse requests on event-loop lag (`api.admission.maxEventLoopLagMs`, default on). Off for
   * files that spawn many processes on a small machine and test something other than admission.
   */
  shedOnEventLoopLag?: boolean;
  /** `durable.operations` of both roles (bulk operations); default the configuration's. */
  operations?: { batchSize?: number; intervalMs?: number };
}

export async function startRolesHarness(
  file: string,
  options: RolesHarnessOptions = {},
): Promise<RolesHarness> {
  const stores = await createTestStores(file);
  const { db, prefix } = stores;
  const port = await freePort();
  const runnerPort = await freePort();
  const config = writeTestConfig("roles", {
    durable: {
      lock: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
      sweep: { intervalMs: 500, graceMs: 1000 },
      ...(options.operations ? { operations: options.operations } : {}),
    },
    api: {
      rateLimit: { max: 1_000_000, windowSeconds: 60 },
      ...(options.shedOnEventLoopLag === false ? { admission: { maxEventLoopLagMs: 0 } } : {}),
    },
    evidence: { signingKey: { env: "TENOR_TEST_EVIDENCE_KEY" } },
  });
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const env = { ...stores.env, TENOR_CONFIG: config.file };
  const runnerEnv = {
    ...env,
    DAPI_ROLE: "runner",
    TENOR_RUNNER_HEALTH_PORT: String(runnerPort),
    TENOR_LOG_LEVEL: "warn",
  };
  const roles: RoleProcess[] = [
    spawnRole({
      ...env,
      DAPI_ROLE: "api",
      TENOR_API_PORT: String(port),
      TENOR_LOG_LEVEL: "warn",
      TENOR_TEST_EVIDENCE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    }),
    spawnRole(runnerEnv),
  ];
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    for (const role of roles) role.kill("SIGKILL");
    await Promise.all(roles.map((r) => r.exited));
    await stores.drop();
  };
  try {
    await roleReady("api ready", roles[0] as RoleProcess, base);
    await roleReady("runner ready", roles[1] as RoleProcess, `http://127.0.0.1:${runnerPort}`);
  } catch (error) {
    const output = roles.map((r) => r.output()).join("\n");
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  const { keys } = await issueTestKeys<Person>(new PgApiKeys(db.pool), PEOPLE);
  const call = httpClient(base, keys);
  const harness: RolesHarness = {
    db,
    pool: db.pool,
    base,
    env: { ...env, TENOR_API_URL: base },
    prefix,
    keys,
    evidencePublicKey: publicKey,
    call,
    async startDemo(input) {
      const started = await call("integrator", "POST", "/v1/workflows/demo.asset-issue/executions", input);
      if (started.status !== 202)
        throw new Error(`start answered ${started.status}: ${JSON.stringify(started.body)}`);
      return started.body.id as string;
    },
    async startDemosAwaitingApproval(symbols) {
      const ids: string[] = [];
      for (const symbol of symbols)
        ids.push(await harness.startDemo({ symbol, approvalTimeout: "10m", settle: "10ms" }));
      for (const id of ids)
        await harness.waitFor(
          id,
          (e) => e.status === "waiting" && e.waitingFor[0]?.kind === "approval",
          "the approval wait",
        );
      return ids;
    },
    async waitFor(id, predicate, what) {
      let last: unknown = null;
      try {
        await eventually(what, async () => {
          last = (await call("operator", "GET", `/v1/executions/${id}`)).body;
          return predicate(last);
        });
      } catch (error) {
        throw new Error(`${(error as Error).message}: ${JSON.stringify(last)}`);
      }
      return last;
    },
    async killRunner() {
      const runner = roles[1] as RoleProcess;
      runner.kill("SIGKILL");
      await runner.exited;
    },
    runnerPid: () => (roles[1] as RoleProcess).child.pid as number,
    async restartRunner() {
      const old = roles[1] as RoleProcess;
      old.kill("SIGKILL");
      await old.exited;
      const runner = spawnRole(runnerEnv);
      roles[1] = runner;
      await roleReady("runner ready again", runner, `http://127.0.0.1:${runnerPort}`);
    },
    stop,
  };
  return harness;
}

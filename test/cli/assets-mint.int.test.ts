import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetToken } from "../../src/chain/contracts/artifacts.js";
import { PgApiKeys } from "../../src/store/pg-api-keys.js";
import { bondTemplate, HOT, resolverForHot } from "../flows/assets/support/asset-world.js";
import { ANVIL_KEYS, type Anvil, startAnvil } from "../support/anvil.js";
import { type HttpClient, httpClient, issueTestKeys } from "../support/api-client.js";
import { type TestConfigFile, writeTestConfig } from "../support/config-file.js";
import { freePort, killAllProcesses, waitUntil } from "../support/processes.js";
import { type RoleProcess, roleReady, spawnRole } from "../support/role-process.js";
import { createTestStores, type TestStores } from "../support/test-stores.js";
import { runTenor } from "./support/run-cli.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read the API's JSON answers as they come.
type Json = any;

/**
 * `tenor assets mint` as a real process (scripts/tenor.ts) against the real api and runner roles
 * and anvil: holders from flags and from a file, a table for people and JSON for scripts, the
 * same Idempotency-Key answering the same mint, the API's refusals as exit 1 and a wrong command
 * line as exit 2; the mint audited in the issuer's name.
 */

const PEOPLE = {
  issuer: { org: "acme", role: "issuer", subject: "issuer@acme" },
  integrator: { org: "acme", role: "integrator", subject: "ops@acme" },
} as const;
type Person = keyof typeof PEOPLE;

let anvil: Anvil;
let stores: TestStores;
let config: TestConfigFile;
let base: string;
let call: HttpClient<Person>;
let keys: Record<Person, string>;
const roles: RoleProcess[] = [];
let assetId: string;
let token: Address;
const holders = [2, 3, 4].map((i) => privateKeyToAccount(ANVIL_KEYS[i] as `0x${string}`).address);

beforeAll(async () => {
  [anvil, stores] = await Promise.all([startAnvil(), createTestStores(import.meta.url)]);
  const template = bondTemplate(anvil, await resolverForHot(anvil), { tokenDecimals: 6 });
  config = writeTestConfig("assets-cli", {
    durable: {
      lock: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
      sweep: { intervalMs: 500, graceMs: 1000 },
    },
    api: { rateLimit: { max: 1_000_000, windowSeconds: 60 } },
    chains: [
      {
        id: anvil.chainId,
        name: "anvil",
        rpcUrls: [anvil.url],
        finality: { depth: 1 },
        confirmationWatcher: { intervalMs: 50 },
      },
    ],
    signers: [{ id: "hot", kind: "local", orgId: "acme", privateKey: { env: "ASSETS_CLI_HOT_KEY" } }],
    assetTemplates: [template],
  });
  const env = {
    ...stores.env,
    TENOR_CONFIG: config.file,
    TENOR_LOG_LEVEL: "warn",
    ASSETS_CLI_HOT_KEY: ANVIL_KEYS[1] as string,
  };
  const [apiPort, runnerPort] = [await freePort(), await freePort()];
  roles.push(
    spawnRole({ ...env, DAPI_ROLE: "api", TENOR_API_PORT: String(apiPort) }),
    spawnRole({ ...env, DAPI_ROLE: "runner", TENOR_RUNNER_HEALTH_PORT: String(runnerPort) }),
  );
  base = `http://127.0.0.1:${apiPort}`;
  await roleReady("api ready", roles[0] as RoleProcess, base);
  await roleReady("runner ready", roles[1] as RoleProcess, `http://127.0.0.1:${runnerPort}`);
  ({ keys } = await issueTestKeys<Person>(new PgApiKeys(stores.db.pool), PEOPLE));
  call = httpClient(base, keys);
  const started = await call("integrator", "POST", "/v1/workflows/asset.create/executions", {
    templateId: "acme-bond",
    name: "Cli Bond",
    symbol: "CLI1",
    initialPrice: "100",
  });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const created = await settled(started.body.id);
  expect(created.status, JSON.stringify(created.failure)).toBe("completed");
  ({ assetId, token } = created.result as { assetId: string; token: Address });
}, 200_000);

afterAll(async () => {
  for (const role of roles) role.kill("SIGKILL");
  await Promise.all(roles.map((r) => r.exited));
  await killAllProcesses();
  await stores?.drop();
  await anvil?.stop();
});

/** Polls GET /v1/executions/{id} until the execution completed or failed. */
function settled(id: string): Promise<Json> {
  return waitUntil(
    `execution ${id} to settle`,
    async () => {
      const { body } = await call("integrator", "GET", `/v1/executions/${id}`);
      return body.status === "completed" || body.status === "failed" ? body : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 200 },
  );
}

const as = (person: Person) => ({ ...stores.env, TENOR_API_URL: base, TENOR_API_KEY: keys[person] });
const balance = (holder: string) =>
  anvil.public.readContract({
    address: token,
    abi: AssetToken.abi,
    functionName: "balanceOf",
    args: [holder as Address],
  });
const sentByHot = () => anvil.public.getTransactionCount({ address: HOT });

describe("tenor assets mint", () => {
  it("mints to holders from flags and a file, prints the mint and its holders; the same key again mints nothing more", async () => {
    const file = path.join(config.dir, "holders.csv");
    writeFileSync(file, `# address,amount\n${holders[1]},0.000001\n\n${holders[2]},7\n`);
    const args = ["assets", "mint", assetId, "--holder", `${holders[0]}=1250.5`, "--holders", file];
    const first = await runTenor([...args, "--idempotency-key", "cli-mint-1"], as("issuer"));
    expect(first.code, first.stderr).toBe(0);
    const id = /^mint started:\s+execution (\S+) \(asset\.mint, \w+\)$/m.exec(first.stdout)?.[1];
    expect(id, first.stdout).toBeDefined();
    expect(first.stdout).toMatch(new RegExp(`^asset:\\s+${assetId}$`, "m"));
    expect(first.stdout).toMatch(/^HOLDER\s+AMOUNT$/m);
    expect(first.stdout).toContain(`${holders[0]}  1250.5\n`);
    expect(first.stdout).toContain(`${holders[2]}  7\n`);

    const view = await settled(id as string);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    expect(view.result).toMatchObject({ assetId, holders: 3, totalUnits: "1257500001" });
    expect(await balance(holders[0] as string)).toBe(1_250_500_000n);
    expect(await balance(holders[1] as string)).toBe(1n);
    expect(await balance(holders[2] as string)).toBe(7_000_000n);

    // Run again with the same key (a retry after a lost answer): the same mint, nothing sent.
    const sent = await sentByHot();
    const again = await runTenor([...args, "--idempotency-key", "cli-mint-1", "--json"], as("issuer"));
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id, workflow: "asset.mint", status: "completed" });
    const human = await runTenor([...args, "--idempotency-key", "cli-mint-1"], as("issuer"));
    expect(human.stdout).toMatch(
      new RegExp(`^already started:\\s+execution ${id} \\(asset\\.mint, completed\\)$`, "m"),
    );
    expect(await sentByHot()).toBe(sent);

    const audit = await stores.db.pool.query(
      "SELECT subject, role, target FROM audit_events WHERE action = 'asset.mint' ORDER BY id",
    );
    expect(audit.rows).toHaveLength(3);
    for (const row of audit.rows)
      expect(row).toEqual({ subject: "issuer@acme", role: "issuer", target: `asset:${assetId}` });
  }, 180_000);

  it("reads holders from a JSON file; --json prints the API's execution", async () => {
    const file = path.join(config.dir, "holders.json");
    writeFileSync(file, JSON.stringify([{ address: holders[0], amount: "1" }]));
    const run = await runTenor(
      ["assets", "mint", assetId, "--holders", file, "--idempotency-key", "cli-mint-json", "--json"],
      as("issuer"),
    );
    expect(run.code, run.stderr).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(body).toMatchObject({ workflow: "asset.mint", links: { self: `/v1/executions/${body.id}` } });
    const view = await settled(body.id);
    expect(view.result).toMatchObject({ holders: 1, totalUnits: "1000000" });
  }, 120_000);

  it("exit 1 with the API's refusal: a key that may not mint, an amount finer than the token's decimals", async () => {
    const sent = await sentByHot();
    const integrator = await runTenor(
      ["assets", "mint", assetId, "--holder", `${holders[0]}=1`, "--idempotency-key", "cli-refused-1"],
      as("integrator"),
    );
    expect(integrator.code).toBe(1);
    expect(integrator.stderr).toMatch(/^tenor: the API refused: 403 \w+: /);
    const fine = await runTenor(
      [
        "assets",
        "mint",
        assetId,
        "--holder",
        `${holders[0]}=0.0000001`,
        "--idempotency-key",
        "cli-refused-2",
      ],
      as("issuer"),
    );
    expect(fine.code).toBe(1);
    expect(fine.stderr).toContain("400 REQUEST_INVALID");
    expect(fine.stderr).toContain("body.holders.0.amount");
    expect(await sentByHot()).toBe(sent);
  }, 60_000);

  it("exit 2 with the usage for a wrong command line: no key, no holders, a malformed holder", async () => {
    const env = as("issuer");
    const cases = [
      { args: ["assets", "mint", assetId, "--holder", `${holders[0]}=1`], says: "--idempotency-key" },
      { args: ["assets", "mint", assetId, "--idempotency-key", "k"], says: "needs holders" },
      {
        args: ["assets", "mint", assetId, "--holder", `${holders[0]}`, "--idempotency-key", "k"],
        says: "must be <address>=<amount>",
      },
      {
        args: ["assets", "mint", "--holder", `${holders[0]}=1`, "--idempotency-key", "k"],
        says: "asset's id",
      },
    ];
    const runs = await Promise.all(cases.map((c) => runTenor(c.args, env)));
    runs.forEach((run, i) => {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(cases[i]?.says);
      expect(run.stderr).toContain("Usage:\n  tenor assets mint <asset id>");
    });
  }, 60_000);
});

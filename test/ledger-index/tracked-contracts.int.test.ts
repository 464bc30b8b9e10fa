import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { type ChainWorld, chainWorldApi, startChainWorld } from "../chain/support/chain-world.js";
import { runTenor } from "../cli/support/run-cli.js";
import { type AppClient, appClient, issueTestKeys } from "../support/api-client.js";
import { killAllProcesses, type TestProcess, waitUntil } from "../support/processes.js";
import { startSoleIndexer } from "./support/indexer-process.js";
import { deployToken, HOLDERS, mintSome } from "./support/ledger-world.js";

/**
 * Adding a contract Tenor did not deploy to an organisation's Ledger Index scope, through the API
 * and `tenor contracts`, with a real indexer process on anvil: the token's logs are indexed from the
 * start height given (not before), every refusal names its field and code, and each request is
 * audited.
 */

let world: ChainWorld;
let api: ReturnType<typeof chainWorldApi>;
let server: Server;
let baseUrl: string;
let _indexer: TestProcess;
let as: AppClient<Person>;
let keys: Record<Person, string>;

type Person = "admin" | "integrator" | "globexAdmin";

beforeAll(async () => {
  world = await startChainWorld({ file: "ledger-tracked-contracts", chain: { finality: { depth: 1 } } });
  api = chainWorldApi(world);
  ({ keys } = await issueTestKeys<Person>(api.keys, {
    admin: { org: "acme", role: "admin", subject: "admin@acme" },
    integrator: { org: "acme", role: "integrator", subject: "ops@acme" },
    globexAdmin: { org: "globex", role: "admin", subject: "admin@globex" },
  }));
  as = appClient(api.app, keys);
  server = createServer(api.app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  _indexer = await startSoleIndexer(world);
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await api?.close();
  await world?.stop();
  await killAllProcesses();
});

const tenor = (person: Person, args: string[]) =>
  runTenor(["contracts", ...args], { TENOR_API_URL: baseUrl, TENOR_API_KEY: keys[person] });

const path = () => `/v1/chains/${world.anvil.chainId}/tracked-contracts`;

async function balanceOf(token: Address, holder: Address): Promise<{ balance: string; totalSupply: string }> {
  const res = await as("integrator").get(
    `/v1/chains/${world.anvil.chainId}/tokens/${token}/balances/${holder}`,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The index has every block up to the head and no catch-up range is open. */
async function indexedToHead(): Promise<void> {
  const head = await world.anvil.public.getBlockNumber();
  const reads = new PgLedgerReads(world.engine.pool);
  await waitUntil(
    "the index at the head with no open catch-up range",
    async () => {
      if (((await reads.indexedHeight(world.anvil.chainId)) ?? -1n) < head) return false;
      const open = await world.engine.pool.query(
        "SELECT count(*)::int AS n FROM ledger_ranges WHERE chain_id = $1 AND completed_at IS NULL",
        [world.anvil.chainId],
      );
      return open.rows[0].n === 0;
    },
    { timeoutMs: 60_000 },
  );
}

async function auditOf(target: string): Promise<{ actor: string; outcome: string }[]> {
  const { rows } = await world.engine.pool.query(
    `SELECT subject AS actor, outcome FROM audit_events
     WHERE action = 'contract.track' AND target LIKE $1 ORDER BY id`,
    [`${target}%`],
  );
  return rows;
}

describe("tracking a contract already on chain", () => {
  it("indexes the token's transfers from the start height given, through the CLI, and follows it", async () => {
    // A token Tenor never saw: deployed and minted by a plain wallet, before anyone tracks it.
    const { token } = await deployToken(world.anvil, "EXT");
    await mintSome(world.anvil, token, 2, 0);
    const fromHeight = (await world.anvil.public.getBlockNumber()) + 1n;
    await mintSome(world.anvil, token, 4, 1);
    // The live tail is past every block of the token: what follows is catch-up from the start height.
    await indexedToHead();
    expect(
      (await as("integrator").get(`/v1/chains/${world.anvil.chainId}/tokens/${token}/balances/${HOLDERS[0]}`))
        .status,
    ).toBe(404);

    const added = await tenor("admin", [
      "add",
      token,
      "--chain",
      String(world.anvil.chainId),
      "--from",
      String(fromHeight),
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe(
      `tracking:   ${token} (erc20) on chain ${world.anvil.chainId}\nfrom block: ${fromHeight}\n`,
    );
    await indexedToHead();
    // Only the mints at or above the start height count: 1001..1004, none of the first two.
    expect(await Promise.all(HOLDERS.map(async (h) => (await balanceOf(token, h)).balance))).toEqual([
      "1001",
      "1002",
      "1003",
      "1004",
    ]);
    expect((await balanceOf(token, HOLDERS[0] as Address)).totalSupply).toBe("4010");

    // From now on the live tail follows it.
    await mintSome(world.anvil, token, 1, 7);
    await indexedToHead();
    expect((await balanceOf(token, HOLDERS[0] as Address)).balance).toBe(String(1001 + 7001));

    const list = await tenor("integrator", ["list", "--chain", String(world.anvil.chainId), "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).items).toContainEqual({
      chainId: world.anvil.chainId,
      address: token,
      kind: "erc20",
      fromHeight: fromHeight.toString(),
      removedHeight: null,
    });
    // Another organisation sees none of it.
    expect((await as("globexAdmin").get(path())).body.items).toEqual([]);
    expect(await auditOf(`chains/${world.anvil.chainId}/tracked-contracts/${token}`)).toEqual([
      { actor: "admin@acme", outcome: "accepted" },
    ]);

    // The same contract again is refused, by the API and the CLI, naming the tracking that stands.
    const again = await as("admin").post(path()).send({ address: token, fromHeight: 0 });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: "LEDGER_SCOPE_DUPLICATE",
      details: { address: token, kind: "erc20", fromHeight: fromHeight.toString() },
    });
    const cliAgain = await tenor("admin", [
      "add",
      token,
      "--chain",
      String(world.anvil.chainId),
      "--from",
      "0",
    ]);
    expect(cliAgain.code).toBe(1);
    expect(cliAgain.stderr).toContain("409 LEDGER_SCOPE_DUPLICATE");
    expect(await auditOf(`chains/${world.anvil.chainId}/tracked-contracts/${token}`)).toEqual([
      { actor: "admin@acme", outcome: "accepted" },
      { actor: "admin@acme", outcome: "LEDGER_SCOPE_DUPLICATE" },
      { actor: "admin@acme", outcome: "LEDGER_SCOPE_DUPLICATE" },
    ]);
    // Three CLI processes and three waits for the index, each bounded by 60 s.
  }, 240_000);

  it("refuses what it cannot index, naming field, value and rule, and only admins may add", async () => {
    const { token } = await deployToken(world.anvil, "REF");
    const head = await world.anvil.public.getBlockNumber();

    const integrator = await as("integrator").post(path()).send({ address: token, fromHeight: 0 });
    expect(integrator.status).toBe(403);
    expect(integrator.body.code).toBe("FORBIDDEN");

    const malformed = await as("admin").post(path()).send({ address: "0x1234", kind: "nft", fromHeight: -1 });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("REQUEST_INVALID");
    expect(malformed.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      "body.address",
      "body.fromHeight",
      "body.kind",
    ]);

    const words = await as("admin").post(path()).send({ address: token, fromHeight: "12x" });
    expect(words.status).toBe(400);
    expect(words.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(["body.fromHeight"]);

    const unknownChain = await as("admin")
      .post("/v1/chains/999/tracked-contracts")
      .send({ address: token, fromHeight: 0 });
    expect(unknownChain.status).toBe(404);
    expect(unknownChain.body).toMatchObject({
      code: "CHAIN_UNKNOWN",
      details: { chainId: 999, configured: [world.anvil.chainId] },
    });

    const ahead = await as("admin")
      .post(path())
      .send({ address: token, fromHeight: (head + 1000n).toString() });
    expect(ahead.status).toBe(422);
    expect(ahead.body).toMatchObject({
      code: "LEDGER_SCOPE_INVALID",
      details: { field: "fromHeight", value: (head + 1000n).toString() },
    });
    expect(BigInt(ahead.body.details.head)).toBeGreaterThanOrEqual(head);
    expect(ahead.body.detail).toMatch(/^fromHeight = \d+: must be at most chain \d+'s head, \d+$/);

    const nobody = "0x00000000000000000000000000000000000000aa";
    const noCode = await as("admin").post(path()).send({ address: nobody, fromHeight: 0 });
    expect(noCode.status).toBe(422);
    expect(noCode.body).toMatchObject({
      code: "LEDGER_SCOPE_INVALID",
      details: { field: "address", value: nobody },
    });

    // Nothing refused was tracked; every attempt that named a key is in the audit trail.
    expect(
      (await as("admin").get(path())).body.items.map((c: { address: string }) => c.address),
    ).not.toContain(token);
    const { rows } = await world.engine.pool.query(
      "SELECT outcome FROM audit_events WHERE action = 'contract.track' AND outcome <> 'accepted' ORDER BY id",
    );
    expect(rows.map((r) => r.outcome)).toEqual(
      expect.arrayContaining(["FORBIDDEN", "REQUEST_INVALID", "CHAIN_UNKNOWN", "LEDGER_SCOPE_INVALID"]),
    );
  });
});

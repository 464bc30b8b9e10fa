import request from "supertest";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgLedgerReads } from "../../src/ledger-index/store/reads.js";
import { PgLedgerScope } from "../../src/ledger-index/store/scope.js";
import {
  type ChainWorld,
  chainWorldApi,
  integratorKeys,
  startChainWorld,
} from "../chain/support/chain-world.js";
import { killAllProcesses, type TestProcess, waitUntil } from "../support/processes.js";
import { deployDomain, domainActivity, settingKey } from "./support/domain-contracts.js";
import { startSoleIndexer } from "./support/indexer-process.js";

/**
 * The API over the Ledger Index with a real indexer process (test/fixtures/ledger-indexer-process.ts):
 * `Prefer: wait` answers a finished chain write only once the index has its block (within the
 * same wait, saying whether it got there in `Tenor-Indexed`), and the price-feed, asset-status
 * and settings reads are scoped to the key's organisation.
 */

let world: ChainWorld;
let api: ReturnType<typeof chainWorldApi>;
let indexer: TestProcess;
let acme: string;
let globex: string;
const ASSET = "0x00000000000000000000000000000000000d0d0d" as Address;

beforeAll(async () => {
  world = await startChainWorld({ file: "ledger-api-reads", chain: { finality: { depth: 1 } } });
  api = chainWorldApi(world);
  ({ acme, globex } = await integratorKeys(api));
  indexer = await startSoleIndexer(world);
});

afterAll(async () => {
  indexer?.signal("SIGCONT");
  await api?.close();
  await world?.stop();
  await killAllProcesses();
});

const indexedHeight = () => new PgLedgerReads(world.engine.pool).indexedHeight(world.anvil.chainId);

async function indexedToHead(): Promise<void> {
  const head = await world.anvil.public.getBlockNumber();
  await waitUntil("the index at the head", async () => ((await indexedHeight()) ?? -1n) >= head, {
    timeoutMs: 30_000,
  });
}

describe("Prefer: wait on a start whose result is a chain write", () => {
  it("answers once the index has the write's block, and says when the wait ran out first", async () => {
    await indexedToHead();
    const path = "/v1/workflows/chain.transaction/executions";
    const body = {
      chainId: world.anvil.chainId,
      signerId: "hot",
      to: world.hot,
      valueWei: "7",
    };
    const start = (wait?: number) => {
      const req = request(api.app)
        .post(path)
        .set("authorization", `Bearer ${acme}`)
        .set("idempotency-key", "raw-1")
        .send(body);
      return wait === undefined ? req : req.set("prefer", `wait=${wait}`);
    };
    indexer.signal("SIGSTOP");
    const accepted = await start();
    expect(accepted.status).toBe(202);
    const view = await world.settled(accepted.body.id, 30_000);
    expect(view.status).toBe("completed");
    const block = BigInt((view.output as { blockNumber: string }).blockNumber);
    expect((await indexedHeight()) ?? 0n).toBeLessThan(block);

    // Finished, but the index is held: the wait runs out and says so.
    const short = await start(1);
    expect(short.status).toBe(200);
    expect(short.headers["tenor-indexed"]).toBe("false");

    // The index resumes while the answer waits: it comes only after, with the block indexed.
    let answered = false;
    const long = start(60).then((res) => {
      answered = true;
      return res;
    });
    // A read sent after it is answered while it still waits (the index is held, so it cannot be done).
    const plain = await request(api.app)
      .get(`/v1/executions/${accepted.body.id}`)
      .set("authorization", `Bearer ${acme}`);
    expect(plain.status).toBe(200);
    expect(plain.headers["tenor-indexed"]).toBeUndefined();
    expect(answered).toBe(false);
    indexer.signal("SIGCONT");
    const res = await long;
    expect(res.status).toBe(200);
    expect(res.headers["tenor-indexed"]).toBe("true");
    expect((await indexedHeight()) ?? 0n).toBeGreaterThanOrEqual(block);
  });
});

describe("price-feed, asset-status and settings reads", () => {
  it("answer the key's organisation's tracked contracts from the index, and nothing of others", async () => {
    const c = await deployDomain(world.anvil, ASSET);
    const scope = new PgLedgerScope(world.engine.pool);
    const base = { chainId: world.anvil.chainId, orgId: "acme" };
    await scope.add({ ...base, address: c.feed.address, kind: "price-feed", fromHeight: c.feed.block });
    await scope.add({
      ...base,
      address: c.resolver.address,
      kind: "price-resolver",
      fromHeight: c.resolver.block,
    });
    await scope.add({
      ...base,
      address: c.settings.address,
      kind: "system-settings",
      fromHeight: c.settings.block,
    });
    await domainActivity(world.anvil, c, 6);
    await indexedToHead();
    const get = (path: string, key = acme) =>
      request(api.app).get(`/v1/chains/${world.anvil.chainId}${path}`).set("authorization", `Bearer ${key}`);

    const feed = await get(`/price-feeds/${c.feed.address}`);
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    expect(feed.body).toMatchObject({
      feed: c.feed.address,
      asset: ASSET,
      decimals: 8,
      latest: { roundId: "2", answer: "400" },
      tracking: { removedHeight: null },
    });
    const status = await get(`/assets/${ASSET}/status`);
    expect(status.body).toMatchObject({
      status: "active",
      resolver: c.resolver.address,
      maxAgeSeconds: "66",
    });
    const settings = await get(`/system-settings/${c.settings.address}`);
    expect(settings.body.settings).toEqual([
      expect.objectContaining({ key: settingKey("k0"), value: `0x${"5".padStart(64, "0")}` }),
      expect.objectContaining({ key: settingKey("k1"), value: `0x${"2".padStart(64, "0")}` }),
    ]);

    for (const path of [
      `/price-feeds/${c.feed.address}`,
      `/assets/${ASSET}/status`,
      `/system-settings/${c.settings.address}`,
    ]) {
      const other = await get(path, globex);
      expect(other.status, path).toBe(404);
      expect(other.body).toMatchObject({ code: "LEDGER_SCOPE_NOT_FOUND" });
    }
    const bad = await get("/price-feeds/0x12");
    expect(bad.status).toBe(400);
  });
});

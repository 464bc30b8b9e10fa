import request from "supertest";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAsset } from "../../../flows/assets/create-asset.js";
import { mintAsset } from "../../../flows/assets/mint-asset.js";
import type { AssetTemplate } from "../../../flows/assets/ports.js";
import { AssetToken } from "../../../src/chain/contracts/artifacts.js";
import { chainTransactionVersions } from "../../../src/chain/lifecycle/transaction-workflow.js";
import { WorkflowRegistry } from "../../../src/engine/registry.js";
import { createPlatformApi } from "../../../src/roles/platform-api.js";
import { applicationRoutes } from "../../../workers/api-routes.js";
import { type ChainWorld, startChainWorld } from "../../chain/support/chain-world.js";
import { ANVIL_KEYS } from "../../support/anvil.js";
import { issueTestKeys } from "../../support/api-client.js";
import { assetServices, bondTemplate, HOT, resolverForHot } from "./support/asset-world.js";

/**
 * POST /v1/assets/{id}/mints against anvil through the api (the release's own routes and
 * configuration) and the real lifecycle: an issuer mints an active asset to holders in one
 * mintBatch, balances exact; the same Idempotency-Key mints nothing more; every refusal names its
 * field; other roles, other organisations and the generic start route cannot mint; all audited.
 */

let world: ChainWorld;
let api: ReturnType<typeof createPlatformApi>;
let keys: Record<"issuer" | "admin" | "integrator" | "operator" | "globexIssuer", string>;
let assetId: string;
let token: Address;
const templates: AssetTemplate[] = [];
const holders = [2, 3, 4].map((i) => privateKeyToAccount(ANVIL_KEYS[i] as `0x${string}`).address);

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    workflows: [createAsset, mintAsset],
    services: assetServices(templates),
  });
  templates.push(bondTemplate(world.anvil, await resolverForHot(world.anvil), { tokenDecimals: 6 }));
  api = createPlatformApi({
    settings: world.engine.config.api,
    pool: world.engine.pool,
    redis: world.engine.producerRedis,
    prefix: world.engine.config.redisPrefix,
    registry: new WorkflowRegistry([...chainTransactionVersions, createAsset, mintAsset]),
    routes: applicationRoutes,
    config: { ...world.engine.config, assetTemplates: templates },
    logger: world.engine.logger,
    readiness: {},
    health: { draining: false },
    chainIds: [world.anvil.chainId],
    chains: world.chains,
  });
  ({ keys } = await issueTestKeys(api.keys, {
    issuer: { org: "acme", role: "issuer", subject: "issuer@acme" },
    admin: { org: "acme", role: "admin", subject: "admin@acme" },
    integrator: { org: "acme", role: "integrator", subject: "ops@acme" },
    operator: { org: "acme", role: "operator", subject: "operator@acme" },
    globexIssuer: { org: "globex", role: "issuer", subject: "issuer@globex" },
  }));
  const created = await world.settled(
    await world.start(createAsset.name, {
      templateId: "acme-bond",
      name: "Mint Bond",
      symbol: "MNT1",
      initialPrice: "100",
    }),
    60_000,
  );
  expect(created.status, JSON.stringify(created.failure)).toBe("completed");
  ({ assetId, token } = created.output as { assetId: string; token: Address });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await world?.stop();
});

const mint = (key: string, body: unknown, idempotencyKey?: string, id = assetId) => {
  const req = request(api.app).post(`/v1/assets/${id}/mints`).set("authorization", `Bearer ${key}`);
  if (idempotencyKey) req.set("idempotency-key", idempotencyKey);
  return req.send(body as object);
};
const balance = (holder: Address) =>
  world.anvil.public.readContract({
    address: token,
    abi: AssetToken.abi,
    functionName: "balanceOf",
    args: [holder],
  });
const supply = () =>
  world.anvil.public.readContract({ address: token, abi: AssetToken.abi, functionName: "totalSupply" });
const sentByHot = () => world.anvil.public.getTransactionCount({ address: HOT });

describe("POST /v1/assets/{id}/mints", () => {
  it("mints exactly each holder's amount in one mintBatch; the same key again mints nothing more", async () => {
    const body = {
      holders: [
        { address: holders[0], amount: "1250.5" },
        { address: holders[1], amount: "0.000001" },
        { address: (holders[2] as string).toLowerCase(), amount: "7" },
      ],
    };
    const res = await mint(keys.issuer, body, "mint-1");
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ workflow: "asset.mint" });
    const view = await world.settled(res.body.id as string, 60_000);
    expect(view.status, JSON.stringify(view.failure)).toBe("completed");
    expect(view.output).toMatchObject({ assetId, holders: 3, totalUnits: "1257500001" });
    expect(await balance(holders[0] as Address)).toBe(1_250_500_000n);
    expect(await balance(holders[1] as Address)).toBe(1n);
    expect(await balance(holders[2] as Address)).toBe(7_000_000n);
    expect(await supply()).toBe(1_257_500_001n);

    const sent = await sentByHot();
    const replay = await mint(keys.issuer, body, "mint-1");
    expect(replay.status).toBe(202);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.id).toBe(res.body.id);
    expect(await sentByHot()).toBe(sent);
    expect(await supply()).toBe(1_257_500_001n);

    // An admin may mint too.
    const byAdmin = await mint(keys.admin, { holders: [{ address: holders[0], amount: "1" }] }, "mint-admin");
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(202);
    expect((await world.settled(byAdmin.body.id as string, 60_000)).status).toBe("completed");
    expect(await balance(holders[0] as Address)).toBe(1_251_500_000n);
  }, 120_000);

  it("refuses each broken holder list naming the field, and a mint without an Idempotency-Key", async () => {
    const refused = async (body: unknown, idempotencyKey: string | null = "refused") => {
      const res = await mint(keys.issuer, body, idempotencyKey ?? undefined);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.code).toBe("REQUEST_INVALID");
      return (res.body.errors as { pointer: string; message: string }[]).map(
        (e) => `${e.pointer}: ${e.message}`,
      );
    };
    const one = (amount: string, address: string = holders[0] as string) => ({
      holders: [{ address, amount }],
    });
    expect(await refused(one("1.0000001"))).toEqual([
      expect.stringMatching(/^body\.holders\.0\.amount: .*6 decimals/),
    ]);
    expect(await refused(one("0"))).toEqual(["body.holders.0.amount: must be greater than 0"]);
    expect(await refused(one("-1"))).toEqual([
      expect.stringMatching(/^body\.holders\.0\.amount: must be a decimal/),
    ]);
    expect(await refused(one("1e3"))).toEqual([
      expect.stringMatching(/^body\.holders\.0\.amount: must be a decimal/),
    ]);
    expect(await refused(one("1", "0x1234"))).toEqual([
      expect.stringMatching(/^body\.holders\.0\.address: /),
    ]);
    expect(
      await refused({
        holders: [
          { address: holders[0], amount: "1" },
          { address: (holders[0] as string).toLowerCase(), amount: "2" },
        ],
      }),
    ).toEqual(["body.holders.1.address: is already holders[0].address: name each holder once"]);
    expect(await refused({ holders: [] })).toEqual(["body.holders: must name at least one holder"]);
    const many = Array.from({ length: 201 }, (_, i) => ({
      address: `0x${(i + 1).toString(16).padStart(40, "0")}`,
      amount: "1",
    }));
    expect(await refused({ holders: many })).toEqual([
      expect.stringMatching(/^body\.holders: must name at most 200/),
    ]);
    expect(await refused({ ...one("1"), orgId: "globex" })).toEqual([
      expect.stringMatching(/^body\.orgId: /),
    ]);
    expect(await refused(one("1"), null)).toEqual([
      expect.stringMatching(/^header\.idempotency-key: is required/),
    ]);
  });

  it("lets only issuers and admins of the asset's organisation mint, never through the generic start route", async () => {
    const body = { holders: [{ address: holders[0], amount: "1" }] };
    const before = await supply();
    for (const role of ["integrator", "operator"] as const) {
      const res = await mint(keys[role], body, `role-${role}`);
      expect(res.status, role).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
    }
    const theirs = await mint(keys.globexIssuer, body, "globex");
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe("ASSET_NOT_FOUND");
    const generic = await request(api.app)
      .post(`/v1/workflows/${mintAsset.name}/executions`)
      .set("authorization", `Bearer ${keys.integrator}`)
      .send({ assetId, ...body });
    expect(generic.status).toBe(403);
    expect(generic.body).toMatchObject({ code: "FORBIDDEN", details: { path: "/v1/assets/{id}/mints" } });
    expect(await supply()).toBe(before);
    // Every attempt is in the audit trail with its outcome, the refusals included.
    const { rows } = await world.engine.pool.query(
      "SELECT role, outcome FROM audit_events WHERE action = 'asset.mint' AND target = $1 ORDER BY id",
      [`asset:${assetId}`],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { role: "issuer", outcome: "accepted" },
        { role: "admin", outcome: "accepted" },
        { role: "issuer", outcome: "REQUEST_INVALID" },
        { role: "integrator", outcome: "FORBIDDEN" },
        { role: "operator", outcome: "FORBIDDEN" },
        { role: "issuer", outcome: "ASSET_NOT_FOUND" },
      ]),
    );
  });
});

import request from "supertest";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { deployOrganisationSystem } from "../../../flows/organisations/deploy-system.js";
import { organisationSystemsService } from "../../../flows/organisations/ports.js";
import { PgOrganisationSystems } from "../../../flows/organisations/store/pg-organisation-systems.js";
import { indexingScopeService } from "../../../flows/support/indexing-scope.js";
import { issueApiKey } from "../../../src/api/auth/api-key.js";
import { SystemSettings } from "../../../src/chain/contracts/artifacts.js";
import { provide } from "../../../src/engine/services.js";
import { defineWorkflow } from "../../../src/engine/workflow.js";
import { pgIndexingScope } from "../../../workers/indexing-scope.js";
import { type ChainWorld, chainWorldApi, startChainWorld } from "../../chain/support/chain-world.js";

/**
 * organisation.deploy-system end to end on anvil, PostgreSQL and Redis: the first system is
 * tracked and recorded; a second replaces it (the old one removed from the scope at the height its
 * record names, the new one added, in that order before the record); the organisation is the
 * execution's; a second deployment while one runs is refused naming it.
 */

/** Holds an execution open (status waiting) until signalled: a deployment "still running". */
const holder = defineWorkflow({
  name: "test.hold",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  async run(ctx) {
    await ctx.waitForSignal("release", { schema: z.object({}) });
    return {};
  },
});

let world: ChainWorld;

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    workflows: [deployOrganisationSystem, holder],
    services: ({ pool }) => [
      provide(indexingScopeService, pgIndexingScope(pool)),
      provide(organisationSystemsService, new PgOrganisationSystems(pool)),
    ],
  });
});
afterAll(async () => {
  await world?.stop();
});

async function deploy(orgId = "acme") {
  const id = await world.start(
    deployOrganisationSystem.name,
    { chainId: world.anvil.chainId, signerId: "hot" },
    { orgId },
  );
  return { id, view: await world.settled(id, 60_000) };
}

async function systemRows(orgId: string) {
  const { rows } = await world.engine.pool.query(
    `SELECT address, status::text, execution_id::text, from_height::text, removed_height::text
     FROM organisation_systems WHERE org_id = $1 ORDER BY id`,
    [orgId],
  );
  return rows;
}

async function scopeRows(orgId: string) {
  const { rows } = await world.engine.pool.query(
    `SELECT address, kind, added_height::text, removed_height::text
     FROM ledger_scope WHERE org_id = $1 ORDER BY id`,
    [orgId],
  );
  return rows;
}

describe("organisation deployment", () => {
  let first: string;

  it("deploys the organisation's SystemSettings, owned by its signer, tracked and recorded", async () => {
    const { id, view } = await deploy();
    expect(view.status, JSON.stringify(view)).toBe("completed");
    const output = view.output as { address: string; owner: string; replaced: string | null; sent: boolean };
    expect(output).toMatchObject({ chainId: world.anvil.chainId, replaced: null, sent: true });
    first = output.address;
    expect(output.owner.toLowerCase()).toBe(world.hot.toLowerCase());
    const owner = await world.anvil.public.readContract({
      address: first as Address,
      abi: SystemSettings.abi,
      functionName: "owner",
    });
    expect(owner).toBe(world.hot);
    const [row] = await systemRows("acme");
    expect(row).toMatchObject({ address: first, status: "active", execution_id: id, removed_height: null });
    expect(await scopeRows("acme")).toEqual([
      { address: first, kind: "system-settings", added_height: row.from_height, removed_height: null },
    ]);
  }, 90_000);

  it("a second deployment replaces the first: removed from the scope at the height its record names, then recorded", async () => {
    const { id, view } = await deploy();
    expect(view.status, JSON.stringify(view)).toBe("completed");
    const second = (view.output as { address: string }).address;
    expect(second).not.toBe(first);
    expect(view.output).toMatchObject({ replaced: first });
    const rows = await systemRows("acme");
    expect(rows.map((r) => [r.address, r.status])).toEqual([
      [first, "replaced"],
      [second, "active"],
    ]);
    const scope = await scopeRows("acme");
    expect(scope).toEqual([
      {
        address: first,
        kind: "system-settings",
        added_height: rows[0].from_height,
        removed_height: rows[0].removed_height,
      },
      { address: second, kind: "system-settings", added_height: rows[1].from_height, removed_height: null },
    ]);
    // The journal shows the order: the read, the scope change, then the record.
    const names = (await world.engine.client.journal(id)).map((e) => e.name);
    const at = (name: string) => names.indexOf(name);
    expect(at("settings.current")).toBeGreaterThan(at("system.register"));
    expect(at("settings.scope")).toBe(at("settings.current") + 1);
    expect(at("settings.record")).toBe(at("settings.scope") + 1);
  }, 90_000);

  it("the organisation is the execution's: another organisation cannot use acme's signer, and registers nothing", async () => {
    const { view } = await deploy("beta");
    expect(view.status).toBe("failed");
    expect(view.failure).toMatchObject({ code: "SIGNER_UNKNOWN" });
    expect(await systemRows("beta")).toEqual([]);
    expect(await scopeRows("beta")).toEqual([]);
  }, 60_000);

  it("a deployment while another of the organisation runs on the chain is refused, naming it", async () => {
    const running = await world.start(holder.name, {});
    await world.engine.waitForStatus(running, "waiting");
    await world.engine.pool.query(
      `INSERT INTO organisation_systems (org_id, chain_id, address, execution_id, status, from_height)
       VALUES ('acme', $1, '0x00000000000000000000000000000000000000cc', $2, 'deploying', 1)`,
      [world.anvil.chainId, running],
    );
    const { view } = await deploy();
    expect(view.status).toBe("failed");
    expect(view.failure).toMatchObject({
      code: "ORGANISATION_DEPLOYMENT_IN_PROGRESS",
      details: { blockedBy: running },
    });
    expect((await systemRows("acme")).filter((r) => r.status === "active")).toHaveLength(1);
  }, 60_000);

  it("GET /v1/organisations/systems answers the key's organisation's deployments, and nothing of others", async () => {
    const api = chainWorldApi(world);
    try {
      const key = async (orgId: string) =>
        (await issueApiKey(api.keys, { orgId, role: "integrator", name: orgId, subject: `ops@${orgId}` }))
          .key;
      const [acme, beta] = [await key("acme"), await key("beta")];
      const path = `/v1/organisations/systems?chainId=${world.anvil.chainId}`;
      const mine = await request(api.app).get(path).set("authorization", `Bearer ${acme}`);
      expect(mine.status).toBe(200);
      const rows = await systemRows("acme");
      expect(mine.body.items.map((i: { address: string; status: string }) => [i.address, i.status])).toEqual(
        rows.reverse().map((r) => [r.address, r.status]),
      );
      const theirs = await request(api.app).get(path).set("authorization", `Bearer ${beta}`);
      expect(theirs.body).toEqual({ items: [] });
      const other = await request(api.app)
        .get("/v1/organisations/systems?chainId=999")
        .set("authorization", `Bearer ${acme}`);
      expect(other.body).toEqual({ items: [] });
      const bad = await request(api.app)
        .get("/v1/organisations/systems?chainId=x")
        .set("authorization", `Bearer ${acme}`);
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("REQUEST_INVALID");
    } finally {
      await api.close();
    }
  }, 30_000);
});

import path from "node:path";
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployOrganisationSystem } from "../../../flows/organisations/deploy-system.js";
import { chainTransactionVersions } from "../../../src/chain/lifecycle/transaction-workflow.js";
import type { ExecutionClient, ExecutionView } from "../../../src/engine/execution-client.js";
import { type CrashWorld, startCrashWorld } from "../../chain/support/crash-world.js";
import type { Anvil } from "../../support/anvil.js";
import { waitUntil } from "../../support/processes.js";

/**
 * kill -9 of a real runner process after the settings step changed the indexing scope (the old
 * system removed, the new one added, committed) and before its journal entry, so before the
 * record write: the next runner replays from the first line and converges, with the old system
 * removed once, the new one tracked once and recorded active.
 */

let world: CrashWorld;
let anvil: Anvil;
let pool: Pool;
let client: ExecutionClient;
let dir: string;

beforeAll(async () => {
  world = await startCrashWorld({
    file: import.meta.url,
    workflows: [...chainTransactionVersions, deployOrganisationSystem],
  });
  ({ anvil, pool, client, dir } = world);
});

afterAll(async () => {
  await world?.stop();
});

function startRunner(crash?: { step: string; marker: string }) {
  return world.startRunner(
    "organisation-runner",
    "test/fixtures/chain-runner-process.ts",
    crash ? { CRASH_BEFORE_CHECKPOINT: crash.step, CRASH_MARKER: crash.marker } : {},
  );
}

async function deploy(): Promise<string> {
  const { executionId } = await client.start({
    workflow: deployOrganisationSystem.name,
    input: { chainId: anvil.chainId, signerId: "hot" },
    orgId: "acme",
  });
  return executionId;
}

function settled(id: string): Promise<ExecutionView> {
  return waitUntil(
    `deployment ${id} to settle`,
    async () => {
      const v = await client.view(id);
      return v.status === "completed" || v.status === "failed" ? v : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function systems() {
  const { rows } = await pool.query(
    "SELECT address, status::text, removed_height::text FROM organisation_systems ORDER BY id",
  );
  return rows;
}

async function scope() {
  const { rows } = await pool.query(
    "SELECT address, removed_height::text FROM ledger_scope WHERE kind = 'system-settings' ORDER BY id",
  );
  return rows;
}

describe("a runner killed between the scope change and the record write", () => {
  it("the next runner replays from the first line and converges: old removed once, new tracked once and active", async () => {
    // The organisation's current system, recorded and tracked (as an earlier deployment leaves it).
    const old = "0x00000000000000000000000000000000000000aa";
    await pool.query(
      `INSERT INTO organisation_systems (org_id, chain_id, address, execution_id, status, from_height)
       VALUES ('acme', $1, $2, gen_random_uuid(), 'active', 0)`,
      [anvil.chainId, old],
    );
    await pool.query(
      `INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height)
       VALUES ($1, 'acme', $2, 'system-settings', 0)`,
      [anvil.chainId, old],
    );

    const marker = path.join(dir, "crashed-settings-scope");
    const doomed = await startRunner({ step: "settings.scope", marker });
    const id = await deploy();
    expect((await doomed.exit).signal).toBe("SIGKILL");
    // The kill landed after the scope change committed and before the record.
    const between = await scope();
    expect(between.map((r) => [r.address === old, r.removed_height === null])).toEqual([
      [true, false],
      [false, true],
    ]);
    const replacement = between[1]?.address as string;
    expect((await systems()).map((r) => [r.address, r.status])).toEqual([
      [old, "active"],
      [replacement, "deploying"],
    ]);

    const survivor = await startRunner();
    const view = await settled(id);
    await survivor.kill();
    expect(view.status, JSON.stringify(view)).toBe("completed");
    expect(view.output).toMatchObject({ address: replacement, replaced: old, sent: true });
    const names = (await client.journal(id)).map((e) => e.name);
    expect(names.filter((n) => n.startsWith("settings."))).toEqual([
      "settings.current",
      "settings.scope",
      "settings.record",
    ]);
    const records = await systems();
    expect(records.map((r) => [r.address, r.status])).toEqual([
      [old, "replaced"],
      [replacement, "active"],
    ]);
    // One scope row each: the old one removed at the height its record names, the new one live.
    expect(await scope()).toEqual([
      { address: old, removed_height: records[0]?.removed_height },
      { address: replacement, removed_height: null },
    ]);
  }, 120_000);
});

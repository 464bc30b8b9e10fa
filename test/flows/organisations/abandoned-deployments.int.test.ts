import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { organisationSystemsService } from "../../../flows/organisations/ports.js";
import {
  ORGANISATION_DEPLOYMENTS_SCHEDULE,
  organisationDeploymentsSchedule,
} from "../../../flows/organisations/schedules/deployments-schedule.js";
import { PgOrganisationSystems } from "../../../flows/organisations/store/pg-organisation-systems.js";
import { indexingScopeService } from "../../../flows/support/indexing-scope.js";
import { BusinessError } from "../../../src/engine/errors.js";
import { provide } from "../../../src/engine/services.js";
import { defineWorkflow } from "../../../src/engine/workflow.js";
import { createLogger } from "../../../src/observability/logger.js";
import { registerSchedules } from "../../../src/schedules/schedule-service.js";
import { runScheduleTick } from "../../../src/schedules/schedule-tick.js";
import { requestCancellation } from "../../../src/store/pg-cancellation.js";
import { pgIndexingScope } from "../../../workers/indexing-scope.js";
import { type ChainWorld, startChainWorld } from "../../chain/support/chain-world.js";

/**
 * The failed-deployment schedule on real rows and a real schedule run (its window claimed in
 * schedule_runs): deployments whose execution failed, was cancelled or is gone are declared failed
 * at the chain's height and taken out of the indexing scope; a running one is left alone; a dead
 * replacement's predecessor is tracked again; a second run finds nothing.
 */

const fails = defineWorkflow({
  name: "test.fails",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  async run() {
    throw new BusinessError("TEST_FAILED", "this deployment failed");
  },
});

const holds = defineWorkflow({
  name: "test.holds",
  version: 1,
  input: z.object({}),
  output: z.object({}),
  async run(ctx) {
    await ctx.waitForSignal("release", { schema: z.object({}) });
    return {};
  },
});

let world: ChainWorld;
const logger = createLogger({ level: "error" });

beforeAll(async () => {
  world = await startChainWorld({
    file: import.meta.url,
    workflows: [fails, holds],
    services: ({ pool }) => [
      provide(indexingScopeService, pgIndexingScope(pool)),
      provide(organisationSystemsService, new PgOrganisationSystems(pool)),
    ],
  });
});
afterAll(async () => {
  await world?.stop();
});

const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;

async function deployment(orgId: string, n: number, executionId: string, status = "deploying") {
  await world.engine.pool.query(
    `INSERT INTO organisation_systems (org_id, chain_id, address, execution_id, status, from_height)
     VALUES ($1, $2, $3, $4, $5, 1)`,
    [orgId, world.anvil.chainId, address(n), executionId, status],
  );
}

async function track(orgId: string, n: number, removedHeight: number | null = null) {
  await world.engine.pool.query(
    `INSERT INTO ledger_scope (chain_id, org_id, address, kind, added_height, removed_height)
     VALUES ($1, $2, $3, 'system-settings', 1, $4)`,
    [world.anvil.chainId, orgId, address(n), removedHeight],
  );
}

async function system(n: number) {
  const { rows } = await world.engine.pool.query(
    `SELECT status::text, removed_height::text, failure_reason FROM organisation_systems WHERE address = $1`,
    [address(n)],
  );
  return rows[0];
}

async function liveScope(n: number): Promise<boolean> {
  const { rows } = await world.engine.pool.query(
    "SELECT 1 FROM ledger_scope WHERE address = $1 AND removed_height IS NULL",
    [address(n)],
  );
  return rows.length > 0;
}

async function tick(firedAt: Date) {
  const definition = organisationDeploymentsSchedule(60_000, world.engine.services);
  const outcome = await runScheduleTick(
    { pool: world.engine.pool, logger, runnerId: "test-runner" },
    definition,
    firedAt,
  );
  const { rows } = await world.engine.pool.query(
    "SELECT result FROM schedule_runs WHERE schedule = $1 ORDER BY window_start DESC LIMIT 1",
    [ORGANISATION_DEPLOYMENTS_SCHEDULE],
  );
  return { outcome, summary: rows[0]?.result };
}

describe("the failed-deployment schedule", () => {
  it("declares abandoned deployments failed and takes them out of the scope; leaves running ones", async () => {
    // 1: its execution failed after its system was added to the scope.
    const failed = await world.start(fails.name, {});
    expect((await world.settled(failed)).status).toBe("failed");
    await deployment("acme", 1, failed);
    await track("acme", 1);
    // 2: its execution was cancelled (ends failed, CANCELLED), nothing tracked yet.
    const cancelled = await world.start(holds.name, {});
    await world.engine.waitForStatus(cancelled, "waiting");
    await requestCancellation(world.engine.pool, "acme", cancelled);
    await world.engine.runner().queue.wake(cancelled);
    expect((await world.settled(cancelled)).failure).toMatchObject({ code: "CANCELLED" });
    await deployment("bravo", 2, cancelled);
    // 3: its execution no longer exists (retention deleted it).
    await deployment("charlie", 3, randomUUID());
    await track("charlie", 3);
    // 4: still running: left alone.
    const running = await world.start(holds.name, {}, { orgId: "delta" });
    await world.engine.waitForStatus(running, "waiting");
    await deployment("delta", 4, running);
    await track("delta", 4);
    // 5 replaced by 6, whose execution died between the scope change and the record: 5 is still
    // the organisation's system but was removed from the scope; 6 is tracked.
    await deployment("echo", 5, randomUUID(), "active");
    await track("echo", 5, 40);
    await deployment("echo", 6, randomUUID());
    await track("echo", 6);

    const headBefore = await world.anvil.public.getBlockNumber();
    await registerSchedules(world.engine.pool, [
      organisationDeploymentsSchedule(60_000, world.engine.services),
    ]);
    const first = await tick(new Date());
    expect(first.outcome).toBe("succeeded");
    expect(first.summary).toMatchObject({ failed: 4, released: 4, restored: 1, errors: 0 });

    for (const n of [1, 2, 3, 6]) {
      const row = await system(n);
      expect(row.status, `deployment ${n}`).toBe("failed");
      expect(BigInt(row.removed_height)).toBeGreaterThanOrEqual(headBefore);
      expect(await liveScope(n), `deployment ${n} tracked`).toBe(false);
    }
    expect((await system(1)).failure_reason).toContain("TEST_FAILED");
    expect((await system(2)).failure_reason).toContain("CANCELLED");
    expect((await system(3)).failure_reason).toBe("execution no longer exists");
    // The scope row of 1 was removed at the height its record names.
    const { rows } = await world.engine.pool.query(
      "SELECT removed_height::text FROM ledger_scope WHERE address = $1",
      [address(1)],
    );
    expect(rows).toEqual([{ removed_height: (await system(1)).removed_height }]);
    expect(await system(4)).toMatchObject({ status: "deploying", removed_height: null });
    expect(await liveScope(4)).toBe(true);
    // The organisation's recorded system is tracked again.
    expect((await system(5)).status).toBe("active");
    expect(await liveScope(5)).toBe(true);

    // The next window finds nothing to do.
    const second = await tick(new Date(Date.now() + 60_000));
    expect(second.outcome).toBe("empty");
    expect(second.summary).toMatchObject({ failed: 0, released: 0, restored: 0, errors: 0 });
  }, 60_000);

  it("finishes a failed deployment whose system a stopped pass left in the scope", async () => {
    await deployment("foxtrot", 7, randomUUID(), "failed");
    await world.engine.pool.query("UPDATE organisation_systems SET removed_height = 5 WHERE address = $1", [
      address(7),
    ]);
    await track("foxtrot", 7);
    const run = await tick(new Date(Date.now() + 120_000));
    expect(run.summary).toMatchObject({ failed: 0, released: 1 });
    const { rows } = await world.engine.pool.query(
      "SELECT removed_height::text FROM ledger_scope WHERE address = $1",
      [address(7)],
    );
    expect(rows).toEqual([{ removed_height: "5" }]);
  }, 30_000);
});

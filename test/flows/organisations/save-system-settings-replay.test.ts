import { beforeEach, describe, expect, it } from "vitest";
import type {
  Activation,
  OrganisationSystem,
  OrganisationSystems,
} from "../../../flows/organisations/ports.js";
import { organisationSystemsService } from "../../../flows/organisations/ports.js";
import { saveSystemSettings } from "../../../flows/organisations/save-system-settings.js";
import {
  type IndexingScope,
  indexingScopeService,
  type TrackedContract,
} from "../../../flows/support/indexing-scope.js";
import type { WorkflowContext } from "../../../src/engine/context.js";
import { provide, ServiceSet, serviceLookup } from "../../../src/engine/services.js";

/**
 * Replay of the settings step order (read the case, change the scope, record) with the process
 * "killed" after any write and before its journal entry, once or several times, and with the
 * journal lost altogether: every run converges to the same state, the old system removed once
 * at the height the record names, the new one tracked once and recorded active. The ports are
 * in-memory models of the same contracts the PostgreSQL ones keep (test/flows/organisations/
 * deploy-system.int.test.ts and crash.int.test.ts run the real ones).
 */

const ORG = "acme";
const CHAIN = 31337;
const OLD = "0x00000000000000000000000000000000000000aa";
const NEW = "0x00000000000000000000000000000000000000bb";
const EXECUTION = "new-deployment";

interface ScopeRow {
  address: string;
  addedHeight: bigint;
  removedHeight: bigint | null;
}

/** The indexing scope's contract (workers/indexing-scope.ts): idempotent add, remove and replace. */
class MemoryScope implements IndexingScope {
  rows: ScopeRow[] = [];
  private tracked(address: string) {
    return this.rows.find((r) => r.address === address && r.removedHeight === null);
  }
  async add(c: TrackedContract, fromHeight: bigint) {
    if (!this.tracked(c.address))
      this.rows.push({ address: c.address, addedHeight: fromHeight, removedHeight: null });
  }
  async remove(c: TrackedContract, atHeight: bigint) {
    const row = this.tracked(c.address);
    if (row) row.removedHeight = atHeight;
  }
  async replace(old: TrackedContract, atHeight: bigint, replacement: TrackedContract, fromHeight: bigint) {
    await this.remove(old, atHeight);
    await this.add(replacement, fromHeight);
  }
  async live(): Promise<TrackedContract[]> {
    return this.rows
      .filter((r) => r.removedHeight === null)
      .map((r) => ({ chainId: CHAIN, orgId: ORG, address: r.address, kind: "system-settings" as const }));
  }
}

/** organisation_systems' contract (flows/organisations/store/pg-organisation-systems.ts): idempotent activation. */
class MemorySystems implements OrganisationSystems {
  rows: OrganisationSystem[] = [];
  async register(): Promise<never> {
    throw new Error("not used here");
  }
  async deployment(executionId: string) {
    return this.rows.find((r) => r.executionId === executionId) ?? null;
  }
  async active(orgId: string, chainId: number) {
    return this.rows.find((r) => r.orgId === orgId && r.chainId === chainId && r.status === "active") ?? null;
  }
  async activate(executionId: string, replacedAtHeight: bigint): Promise<Activation> {
    const row = this.rows.find((r) => r.executionId === executionId);
    if (!row) throw new Error(`no deployment ${executionId}`);
    if (row.status === "active") return { activated: true, system: row, replaced: null };
    if (row.status !== "deploying") return { activated: false, system: row };
    const previous = await this.active(row.orgId, row.chainId);
    if (previous) Object.assign(previous, { status: "replaced", removedHeight: replacedAtHeight });
    row.status = "active";
    return { activated: true, system: row, replaced: previous };
  }
  async abandoned(): Promise<never> {
    throw new Error("not used here");
  }
  async markFailed(): Promise<never> {
    throw new Error("not used here");
  }
}

class Killed extends Error {}

/**
 * The engine's journal contract in miniature: positions already journaled return their recorded
 * (JSON) value without running; a new position runs its work and is journaled, unless the run is
 * killed at that position after the work and before the journal write.
 */
function runContext(journal: { name: string; value: string }[], killAt?: number): WorkflowContext {
  let position = 0;
  const services = serviceLookup(
    "workflow",
    { name: "test.save-settings", services: [indexingScopeService, organisationSystemsService] },
    new ServiceSet([provide(indexingScopeService, scope), provide(organisationSystemsService, systems)]),
  );
  return {
    orgId: ORG,
    executionId: EXECUTION,
    service: services.service,
    async step<T>(name: string, work: () => Promise<T>): Promise<T> {
      const at = position++;
      const recorded = journal[at];
      if (recorded) {
        expect(recorded.name).toBe(name);
        return JSON.parse(recorded.value) as T;
      }
      const value = await work();
      if (at === killAt) throw new Killed(`killed after ${name}`);
      journal.push({ name, value: JSON.stringify(value) });
      return value;
    },
  } as unknown as WorkflowContext;
}

let scope: MemoryScope;
let systems: MemorySystems;
let height: bigint;

beforeEach(() => {
  scope = new MemoryScope();
  systems = new MemorySystems();
  height = 100n;
  scope.rows.push({ address: OLD, addedHeight: 10n, removedHeight: null });
  systems.rows.push(
    {
      orgId: ORG,
      chainId: CHAIN,
      address: OLD,
      executionId: "old",
      status: "active",
      fromHeight: 10n,
      removedHeight: null,
    },
    {
      orgId: ORG,
      chainId: CHAIN,
      address: NEW,
      executionId: EXECUTION,
      status: "deploying",
      fromHeight: 50n,
      removedHeight: null,
    },
  );
});

/** One run of the body from its first line; the chain moves one block per height read. */
function run(journal: { name: string; value: string }[], killAt?: number) {
  return saveSystemSettings(runContext(journal, killAt), {
    chainId: CHAIN,
    address: NEW,
    fromHeight: 50n,
    head: async () => height++,
  });
}

/**
 * The converged state: the old system out of scope (at the height its record names, when the
 * journal kept the read), the new one tracked once and active.
 */
function expectConverged({ sameHeight = true } = {}) {
  const old = scope.rows.filter((r) => r.address === OLD);
  const added = scope.rows.filter((r) => r.address === NEW);
  expect(old).toHaveLength(1);
  expect(added).toEqual([{ address: NEW, addedHeight: 50n, removedHeight: null }]);
  const oldRecord = systems.rows.find((r) => r.address === OLD);
  expect(oldRecord?.status).toBe("replaced");
  expect(old[0]?.removedHeight).not.toBeNull();
  if (sameHeight) expect(old[0]?.removedHeight).toBe(oldRecord?.removedHeight);
  expect(systems.rows.find((r) => r.address === NEW)?.status).toBe("active");
}

const POSITIONS = { "settings.current": 0, "settings.scope": 1, "settings.record": 2 } as const;
const KILL_SEQUENCES: (keyof typeof POSITIONS)[][] = [
  [],
  ["settings.current"],
  ["settings.scope"],
  ["settings.record"],
  ["settings.current", "settings.scope"],
  ["settings.scope", "settings.record"],
  ["settings.current", "settings.scope", "settings.record"],
];

describe("saving system settings, replayed from the first line", () => {
  for (const kills of KILL_SEQUENCES) {
    it(`converges when killed after ${kills.length ? kills.join(", then ") : "nothing"}`, async () => {
      const journal: { name: string; value: string }[] = [];
      for (const kill of kills) {
        await expect(run(journal, POSITIONS[kill])).rejects.toBeInstanceOf(Killed);
      }
      const saved = await run(journal);
      expect(saved).toEqual({ replaced: OLD });
      expect(journal.map((e) => e.name)).toEqual(["settings.current", "settings.scope", "settings.record"]);
      expectConverged();
    });
  }

  it("converges when the journal is lost after the scope change or after the record", async () => {
    await expect(run([], POSITIONS["settings.scope"])).rejects.toBeInstanceOf(Killed);
    // A run from an empty journal reads the case again: still "different", the replace only adds.
    await expect(run([], POSITIONS["settings.record"])).rejects.toBeInstanceOf(Killed);
    // Recorded but not journaled, journal lost again: the case is now "same", nothing is removed twice.
    expect(await run([])).toEqual({ replaced: null });
    // Without the journaled read the second run read a newer head: the record names that one.
    expectConverged({ sameHeight: false });
  });

  it("changes nothing for a deployment already declared failed", async () => {
    const own = systems.rows.find((r) => r.executionId === EXECUTION);
    if (own) own.status = "failed";
    await expect(run([])).rejects.toMatchObject({ code: "ORGANISATION_DEPLOYMENT_ABANDONED" });
    expect(scope.rows).toEqual([{ address: OLD, addedHeight: 10n, removedHeight: null }]);
    expect(systems.rows.find((r) => r.address === OLD)?.status).toBe("active");
  });
});

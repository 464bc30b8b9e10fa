import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChaosOutput } from "../fixtures/fault-workflows.js";
import { createFaultWorld, type FaultWorld, waitsFor } from "../runtime/fault-harness.js";
import { type OwnRedis, startOwnRedis } from "../runtime/own-redis.js";
import { killAllProcesses, type TestProcess } from "../support/processes.js";
import { type Fault, type FaultKind, historyReport } from "./history-checker.js";

/**
 * The chaos suite (docs/engine.md, "What the chaos suite proves"): real runner processes and a
 * private redis-server run `chaos.mixed` executions (steps, concurrent branches with the same
 * step names, a timer, an activity, a child and a signal) while faults land at random — kill -9 of
 * a runner, SIGSTOP past the lock window then SIGCONT, FLUSHALL of Redis, termination of the
 * runners' PostgreSQL connections — and signals arrive before, during and after them. Then a
 * history checker reads what happened (test/chaos/history-checker.ts).
 *
 * Short form by default (CI); `npm run chaos` runs the long form: CHAOS_ROUNDS rounds of
 * CHAOS_EXECUTIONS executions and CHAOS_FAULTS faults each. CHAOS_SEED replays a fault schedule.
 */

const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 1);
const EXECUTIONS = Number(process.env.CHAOS_EXECUTIONS ?? 8);
const FAULTS = Number(process.env.CHAOS_FAULTS ?? 5);
const RUNNERS = 3;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const FAULT_KINDS: FaultKind[] = ["kill", "stop", "flush", "pg-terminate"];

/** A small deterministic generator, so a failing schedule can be replayed with CHAOS_SEED. */
function generator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
}

let redis: OwnRedis;
let world: FaultWorld;

beforeAll(async () => {
  redis = await startOwnRedis({ appendOnly: false });
  world = await createFaultWorld(import.meta.url, { redisUrl: redis.url });
}, 120_000);

afterAll(async () => {
  await world?.close();
  await killAllProcesses();
  await redis?.stop();
});

describe("chaos", () => {
  it(`${ROUNDS} round(s): every execution completes once and correctly, whatever the faults`, async () => {
    const random = generator(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    console.log(`chaos seed ${SEED}: CHAOS_SEED=${SEED} replays this fault schedule`);
    for (let round = 1; round <= ROUNDS; round++) {
      const started = Date.now();
      let serial = 0;
      const runners: TestProcess[] = await Promise.all(
        Array.from({ length: RUNNERS }, () => world.startRunner(`R${++serial}`)),
      );
      const ids: string[] = [];
      for (let i = 0; i < EXECUTIONS; i++) {
        const sleepMs = 200 + Math.floor(random() * 1_300);
        ids.push(await world.start("chaos.mixed", { tag: `r${round}-${i}`, sleepMs }));
      }
      // Half the executions get their signal before they wait for it: kept, consumed once.
      for (const id of ids.filter(() => random() < 0.5)) await signal(id);
      const signaller = startSignaller(ids);

      const faults: Fault[] = [];
      for (let f = 0; f < FAULTS; f++) {
        await pause(800 + random() * 1_800);
        const kind = pick(FAULT_KINDS);
        const victim = pick(runners.filter((r) => r.running()));
        const at = Date.now();
        if (kind === "kill") {
          await victim.kill();
          runners.splice(runners.indexOf(victim), 1, await world.startRunner(`R${++serial}`));
        } else if (kind === "stop") {
          victim.signal("SIGSTOP");
          // Past the lock (2 s) and a stalled check (1 s): another runner takes its work over.
          await pause(3_500);
          victim.signal("SIGCONT");
        } else if (kind === "flush") {
          await world.redis.flushall();
        } else {
          await world.db.pool.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'tenor-runner'`,
          );
        }
        faults.push({
          kind,
          pid: kind === "kill" || kind === "stop" ? victim.pid : null,
          from: at,
          to: Date.now(),
        });
      }

      for (const id of ids) await world.waitForCompleted(id, 120_000);
      await signaller.stop();
      const report = await historyReport(world.db.pool, ids, faults);
      console.log(
        JSON.stringify({
          round,
          seed: SEED,
          seconds: Math.round((Date.now() - started) / 1000),
          faults: countBy(faults.map((f) => f.kind)),
          ...report.figures,
        }),
      );
      for (const id of ids) {
        const view = await world.view(id);
        const output = ChaosOutput.parse(view.output);
        expect(output.branches).toEqual(["fetch.a+save.a", "fetch.b+save.b", "fetch.c+save.c"]);
        expect(output.quoted).toBe(42);
        expect(output.child.key).toBe("child.work");
        expect(output.signal).toBe(`go-${id}`);
      }
      expect(report.lateBodies).toEqual([]);
      expect(report.illegitimateDuplicates).toEqual([]);
      expect(report.journalDefects).toEqual([]);
      expect(report.figures.lostExecutions).toBe(0);
      await Promise.all(runners.map((r) => r.kill()));
    }
  }, 600_000);
});

/** Delivers `go` once per execution (the idempotency key makes a resend a duplicate). */
async function signal(id: string): Promise<void> {
  await world.client.signal(id, "go", { value: `go-${id}` }, { idempotencyKey: `go-${id}` });
}

/** Resends `go` to every execution that waits for it, every 300 ms, through all faults. */
function startSignaller(ids: string[]): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const id of ids) {
        const view = await world.view(id).catch(() => null);
        if (view && waitsFor(view, "signal", "go")) await signal(id).catch(() => undefined);
      }
      await pause(300);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function countBy(items: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

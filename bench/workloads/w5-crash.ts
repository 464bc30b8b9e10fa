import { forEachLimit, pollUntil, sleep } from "../lib/concurrency.js";
import { RunnerProcess } from "../lib/runner-process.js";
import { TenorSystem } from "../systems/tenor.js";
import { EFFECTS_TABLE_SQL } from "../workflows.js";
import { measure, notMeasured, type SystemResult, type Workload, type WorkloadContext } from "./types.js";

function plan(quick: boolean) {
  // `steps` bounds a chain; it ends at the stop flag the workload raises after the recovery figure.
  return quick
    ? { workflows: 200, steps: 10_000, stepMs: 500 }
    : { workflows: 1_000, steps: 10_000, stepMs: 1_000 };
}

/**
 * W5: runner A holds every workflow mid-run (each step records a side effect, then takes
 * `stepMs`; a chain runs until the workload raises its stop flag, so a slow machine that takes
 * long to spawn runner B still kills A mid-run); runner B is up and idle; A is killed with SIGKILL. Recovery time: until every
 * affected execution has taken a new turn (the fencing token moved past the one it had at the
 * kill) or finished. Then every workflow runs to completion and side effects are counted: a
 * step that ran more than once is a duplicate, except the one step per execution that the kill
 * interrupted (it had not been journaled, so it runs again by design).
 */
export const w5Crash: Workload = {
  id: "W5",
  title: "crash recovery",
  async run(ctx) {
    const p = plan(ctx.quick);
    const tenorResult = await measure(ctx, "tenor", async () => {
      ctx.log("    without runner liveness (lock expiry) ...");
      const baseline = await crashOnce(ctx, p, false);
      ctx.log("    with runner liveness ...");
      const live = await crashOnce(ctx, p, true);
      if (baseline.status !== "ok" || live.status !== "ok") return live.status !== "ok" ? live : baseline;
      const withLiveness = live.figures.recoverySeconds as number;
      const lockExpiry = baseline.figures.recoverySeconds as number;
      return {
        status: "ok",
        figures: {
          recoverySeconds: withLiveness,
          recoverySecondsLockExpiry: lockExpiry,
          recoveryOverLockExpiry: withLiveness / lockExpiry,
          duplicateSideEffects:
            (live.figures.duplicateSideEffects as number) + (baseline.figures.duplicateSideEffects as number),
        },
        details: { withLiveness: live.details, lockExpiry: baseline.details },
      };
    });
    return {
      id: "W5",
      title: "crash recovery",
      status: "ok",
      params: {
        ...p,
        runners:
          "two spawned runner processes; A is SIGKILLed mid-step, B takes over; run twice, without runner liveness (the same run's lock-expiry baseline) and with it",
        progress:
          "an affected execution progresses when a new turn begins (its fencing token moves) or it finishes",
      },
      systems: {
        floor: notMeasured("no floor: takeover time is set by lock expiry, not by I/O"),
        bullmq: notMeasured(
          "plain BullMQ defaults (lockDuration 30 s + stalledInterval 30 s) take up to 60 s by construction; environment notes measured ~15 s with 5 s/5 s",
        ),
        dbos: notMeasured(
          "DBOS recovers a dead executor's workflows when a process with the same executor id relaunches; no standby takeover to time",
        ),
        tenor: tenorResult,
      },
    };
  },
};

/**
 * One kill: A holds every workflow, B idles, A gets SIGKILL. `liveness` off runs both runners
 * without runner liveness, so takeover waits for lock expiry: the same run's baseline.
 */
async function crashOnce(
  ctx: WorkloadContext,
  p: ReturnType<typeof plan>,
  liveness: boolean,
): Promise<SystemResult> {
  const url = await ctx.env.freshDatabase(liveness ? "w5" : "w5-lock-expiry");
  const pool = ctx.env.pool(url, 4);
  try {
    await pool.query(EFFECTS_TABLE_SQL);
    const prefix = ctx.env.prefix(liveness ? "w5-tenor" : "w5-tenor-lock-expiry");
    // Product lock and sweep defaults; concurrency high enough that A holds every workflow at once.
    const durable = { runnerConcurrency: p.workflows };
    const spawnOptions = { databaseUrl: url, redisUrl: ctx.env.redisUrl, prefix, durable, liveness };
    const client = await TenorSystem.start({
      databaseUrl: url,
      redisUrl: ctx.env.redisUrl,
      prefix,
      runner: false,
    });
    const runnerA = await RunnerProcess.spawn(spawnOptions);
    let runnerB: RunnerProcess | null = null;
    try {
      const ids: string[] = [];
      await forEachLimit(p.workflows, 100, async () => {
        const started = await client.client.start({
          workflow: "bench.crash-chain",
          input: { steps: p.steps, stepMs: p.stepMs },
        });
        ids.push(started.executionId);
      });
      await pollUntil(
        "every workflow to be running on runner A",
        async () => {
          const { rows } = await pool.query<{ n: number }>(
            "SELECT count(DISTINCT execution_id)::int AS n FROM bench_effects",
          );
          return (rows[0]?.n ?? 0) >= p.workflows ? true : null;
        },
        { everyMs: 100, timeoutMs: 60_000 },
      );
      runnerB = await RunnerProcess.spawn(spawnOptions);
      await sleep(p.stepMs / 2); // mid-step for most workflows
      const { rows: atKill } = await pool.query<{ id: string; turn: number }>(
        "SELECT id, turn FROM executions WHERE id = ANY($1::uuid[]) AND status NOT IN ('completed', 'failed')",
        [ids],
      );
      if (atKill.length < p.workflows)
        throw new Error(
          `${p.workflows - atKill.length} workflows finished before the kill: was the stop flag set?`,
        );
      const killedAt = performance.now();
      await runnerA.kill();
      const affected = atKill.map((r) => r.id);
      const turns = atKill.map((r) => r.turn);
      const timeline: Array<{ seconds: number; progressed: number }> = [];
      const recoveredAt = await pollUntil(
        "every affected workflow to progress",
        async () => {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM executions e
           JOIN unnest($1::uuid[], $2::int[]) AS k(id, turn) ON k.id = e.id
           WHERE e.turn > k.turn OR e.status IN ('completed', 'failed')`,
            [affected, turns],
          );
          const n = rows[0]?.n ?? 0;
          const seconds = (performance.now() - killedAt) / 1000;
          if (timeline.at(-1)?.progressed !== n) timeline.push({ seconds: round2(seconds), progressed: n });
          return n >= affected.length ? performance.now() : null;
        },
        { everyMs: 50, timeoutMs: 120_000 },
      );
      // The figure is taken: end every chain at its next step, then count side effects.
      await pool.query("INSERT INTO bench_stop DEFAULT VALUES");
      await pollUntil(
        "every workflow to complete",
        async () => {
          const { rows } = await pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM executions WHERE id = ANY($1::uuid[]) AND status = 'completed'",
            [ids],
          );
          return (rows[0]?.n ?? 0) >= p.workflows ? true : null;
        },
        { everyMs: 200, timeoutMs: 180_000 },
      );
      const effects = await countEffects(pool, new Set(affected));
      return {
        status: "ok",
        figures: {
          recoverySeconds: (recoveredAt - killedAt) / 1000,
          duplicateSideEffects: effects.outside,
        },
        details: {
          affectedWorkflows: affected.length,
          interruptedStepReruns: effects.interrupted,
          firstProgressSeconds: timeline.find((t) => t.progressed > 0)?.seconds ?? null,
          halfProgressedSeconds: timeline.find((t) => t.progressed >= affected.length / 2)?.seconds ?? null,
          takeover: liveness
            ? "runner liveness (checked every 250 ms); lock 4000 + 3000 ms behind it"
            : "lock expiry only: lockDurationMs 4000 + stalledIntervalMs 3000 (product defaults)",
        },
      } satisfies SystemResult;
    } finally {
      await runnerA.kill();
      await runnerB?.stop();
      await client.stop();
    }
  } finally {
    await pool.end();
  }
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * Extra runs of step bodies: per execution, every (position) counted beyond its first run. One
 * extra run per affected execution is the interrupted step; anything beyond is a duplicate.
 */
async function countEffects(
  pool: import("pg").Pool,
  affected: ReadonlySet<string>,
): Promise<{ outside: number; interrupted: number }> {
  const { rows } = await pool.query<{ execution_id: string; extra: number; worst: number }>(
    `SELECT execution_id, sum(c - 1)::int AS extra, max(c)::int AS worst
     FROM (SELECT execution_id, position, count(*) AS c FROM bench_effects GROUP BY 1, 2) per_step
     GROUP BY 1 HAVING sum(c - 1) > 0`,
  );
  let outside = 0;
  let interrupted = 0;
  for (const row of rows) {
    const allowed = affected.has(row.execution_id) && row.worst <= 2 ? 1 : 0;
    interrupted += Math.min(row.extra, allowed);
    outside += row.extra - Math.min(row.extra, allowed);
  }
  return { outside, interrupted };
}

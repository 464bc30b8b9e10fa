import { forEachLimit, pollUntil } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { TenorSystem } from "../systems/tenor.js";
import { measure, notMeasured, type SystemResult, type Workload } from "./types.js";

function plan(quick: boolean) {
  return quick
    ? { timers: 2_000, leadMs: 5_000, spreadMs: 3_000 }
    : { timers: 10_000, leadMs: 20_000, spreadMs: 25_000 };
}

/**
 * W8: N workflows sleep until due times spread evenly over a window that opens `leadMs` after
 * the first start, so every timer is parked before it is due. Lateness: when the first step
 * after the timer ran, minus the due time. Timers journaled after their due time (start
 * backlog) are excluded and counted. The due rate (400/s full, 667/s quick) stays under the
 * runner's turn rate (W2): above it, lateness measures throughput, not the timer (first full
 * run: 1,000 due/s gave p99 2.5 s).
 */
export const w8Timers: Workload = {
  id: "W8",
  title: "timer lateness",
  async run(ctx) {
    const p = plan(ctx.quick);
    const url = await ctx.env.freshDatabase("w8");
    const pool = ctx.env.pool(url, 4);
    const tenorResult = await measure(ctx, "tenor", async () => {
      const tenor = await TenorSystem.start({
        databaseUrl: url,
        redisUrl: ctx.env.redisUrl,
        prefix: ctx.env.prefix("w8-tenor"),
      });
      try {
        const origin = Date.now() + p.leadMs;
        await forEachLimit(p.timers, 100, async (i) => {
          const at = Math.round(origin + (i * p.spreadMs) / p.timers);
          await tenor.client.start({ workflow: "bench.timer", input: { at } });
        });
        const startsDoneMs = Date.now() - (origin - p.leadMs);
        await pollUntil(
          "every timer workflow to complete",
          async () => {
            const { rows } = await pool.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM executions WHERE workflow = 'bench.timer' AND status = 'completed'",
            );
            return (rows[0]?.n ?? 0) >= p.timers ? true : null;
          },
          { everyMs: 250, timeoutMs: p.leadMs + p.spreadMs + 120_000 },
        );
        const { rows } = await pool.query<{ lateness: number; at: number; parked: number }>(
          `SELECT (e.output->>'latenessMs')::float8 AS lateness, (e.input->>'at')::float8 AS at,
                  extract(epoch FROM j.completed_at) * 1000 AS parked
           FROM executions e JOIN journal_entries j ON j.execution_id = e.id AND j.position = 0
           WHERE e.workflow = 'bench.timer'`,
        );
        const onTime = rows.filter((r) => Number(r.parked) < Number(r.at));
        const s = summarize(onTime.map((r) => Number(r.lateness)));
        return {
          status: "ok",
          figures: { latenessMsP50: s.p50, latenessMsP99: s.p99 },
          details: {
            latenessMsMax: s.max,
            timersCounted: onTime.length,
            excludedParkedAfterDue: rows.length - onTime.length,
            startPhaseMs: startsDoneMs,
          },
        } satisfies SystemResult;
      } finally {
        await tenor.stop();
      }
    });
    await pool.end();
    return {
      id: "W8",
      title: "timer lateness",
      status: "ok",
      params: {
        ...p,
        dueRatePerSec: Math.round(p.timers / (p.spreadMs / 1000)),
        timer: "ctx.sleepUntil, then one step recording Date.now() - due",
      },
      systems: {
        floor: notMeasured("no floor: a timer's lateness is the scheduler's, not I/O"),
        bullmq: notMeasured("not measured: BullMQ delayed jobs are Tenor's own timer mechanism"),
        dbos: notMeasured("not measured in this run"),
        tenor: tenorResult,
      },
    };
  },
};

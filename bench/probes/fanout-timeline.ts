/**
 * Probe: where a W4 fan-out's time goes, from the rows' own timestamps: parent start to its
 * children's rows, to the first and last child finished, to the parent finished.
 *
 * Usage: node --import tsx bench/probes/fanout-timeline.ts
 */
import { BenchEnv } from "../lib/bench-env.js";
import { TenorSystem } from "../systems/tenor.js";

const env = BenchEnv.fromEnv(process.env);
try {
  await env.prepareTemplate();
  const url = await env.freshDatabase("fanout_timeline");
  const tenor = await TenorSystem.start({
    databaseUrl: url,
    redisUrl: env.redisUrl,
    prefix: env.prefix("fanout"),
  });
  for (let run = 0; run < Number(process.env.RUNS ?? 4); run++) {
    const began = performance.now();
    const { executionId, completedAt } = await tenor.run(
      "bench.fanout-parent",
      { children: 100 },
      { sum: 4950 },
    );
    const { rows } = await tenor.pool.query(
      `SELECT
         extract(epoch FROM (min(c.created_at) - p.created_at)) * 1000 AS first_child_row,
         extract(epoch FROM (max(c.created_at) - p.created_at)) * 1000 AS last_child_row,
         extract(epoch FROM (min(c.completed_at) - p.created_at)) * 1000 AS first_child_done,
         extract(epoch FROM (max(c.completed_at) - p.created_at)) * 1000 AS last_child_done,
         extract(epoch FROM (p.completed_at - p.created_at)) * 1000 AS parent_done,
         p.turn AS parent_turns
       FROM executions p JOIN executions c ON c.parent_id = p.id WHERE p.id = $1 GROUP BY p.id`,
      [executionId],
    );
    console.log(JSON.stringify({ wallMs: Math.round(completedAt - began), ...rows[0] }));
  }
  await tenor.stop();
} finally {
  await env.cleanup();
}

/**
 * The benchmark suite: Tenor against the physical floor, plain BullMQ and DBOS, in one run on
 * the same PostgreSQL and Redis. See docs/performance.md for the method.
 *
 * Usage: npm run bench [-- --quick] [-- --only W1,W2] [-- --out path.json]
 * Env: BENCH_DATABASE_URL (a server URL; default postgresql://postgres@127.0.0.1:5432/postgres),
 *      BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseBenchArgs } from "./cli-options.js";
import { BenchEnv } from "./lib/bench-env.js";
import { readMachineInfo } from "./lib/machine.js";
import { buildReport, renderTable, writeReport } from "./report.js";
import { DbosSystem } from "./systems/dbos.js";
import { p1PrismaHotPath } from "./workloads/p1-prisma-hot-path.js";
import type { Workload, WorkloadContext, WorkloadResult } from "./workloads/types.js";
import { w1Serial } from "./workloads/w1-serial.js";
import { w2Throughput } from "./workloads/w2-throughput.js";
import { w2cClosedLoop } from "./workloads/w2c-closed-loop.js";
import { w3StartRate } from "./workloads/w3-start-rate.js";
import { w4Fanout } from "./workloads/w4-fanout.js";
import { w5Crash } from "./workloads/w5-crash.js";
import { w6Replay } from "./workloads/w6-replay.js";
import { w7Memory } from "./workloads/w7-memory.js";
import { w8Timers } from "./workloads/w8-timers.js";
import { w9Keyed } from "./workloads/w9-keyed.js";
import { w10ChainTransfers } from "./workloads/w10-chain-transfers.js";
import { w11ApiWait } from "./workloads/w11-api-wait.js";
import { w12LedgerIngest } from "./workloads/w12-ledger-ingest.js";
import { w13Admission } from "./workloads/w13-admission.js";
import { w14IoScaling } from "./workloads/w14-io-scaling.js";
import { w14RunnerScaling } from "./workloads/w14-runner-scaling.js";
import { w16ApiClosedLoop } from "./workloads/w16-api-closed-loop.js";
import { w17MultiChainTransfers } from "./workloads/w17-multi-chain-transfers.js";

/** Run order. W11 runs an in-process runner, so it comes before W9, which declares an entity that such a runner would refuse. */
const WORKLOADS: readonly Workload[] = [
  w1Serial,
  w11ApiWait,
  w2Throughput,
  w2cClosedLoop,
  w16ApiClosedLoop,
  w3StartRate,
  w4Fanout,
  w5Crash,
  w6Replay,
  w7Memory,
  w8Timers,
  w9Keyed,
  w10ChainTransfers,
  w17MultiChainTransfers,
  p1PrismaHotPath,
  w13Admission,
  w12LedgerIngest,
  w14RunnerScaling,
  w14IoScaling,
];

const DEFAULT_OUT = fileURLToPath(new URL("./results/latest.json", import.meta.url));

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  const env = BenchEnv.fromEnv(process.env);
  const began = Date.now();
  const date = new Date();
  // Held in an object: TypeScript does not see assignments made inside the closure below.
  const dbosHolder: { launch: Promise<DbosSystem | { error: string }> | null } = { launch: null };
  const results: WorkloadResult[] = [];
  try {
    log(
      `tenor bench: ${options.quick ? "quick" : "full"} run ${env.runId}, workloads ${options.only.join(",")}`,
    );
    await env.prepareTemplate();
    const infoUrl = await env.freshDatabase("info");
    const serverPool = env.pool(env.serverUrl, 1);
    const benchPool = env.pool(infoUrl, 1);
    const machine = await readMachineInfo(serverPool, benchPool, env.redis);
    await Promise.all([serverPool.end(), benchPool.end()]);
    const ctx: WorkloadContext = {
      env,
      quick: options.quick,
      log,
      dbos: () => {
        dbosHolder.launch ??= env
          .emptyDatabase("dbos")
          .then((url) => DbosSystem.launch(url))
          .catch((error: Error) => ({ error: `DBOS could not launch: ${error.message}` }));
        return dbosHolder.launch;
      },
    };
    for (const workload of WORKLOADS.filter((w) => options.only.includes(w.id))) {
      log(`${workload.id} ${workload.title}`);
      const t = Date.now();
      let result: WorkloadResult;
      try {
        result = await workload.run(ctx);
      } catch (error) {
        result = {
          id: workload.id,
          title: workload.title,
          status: "error",
          reason: (error as Error)?.message ?? String(error),
          params: {},
          systems: {},
        };
      }
      result.durationMs = Date.now() - t;
      log(`${workload.id} done in ${(result.durationMs / 1000).toFixed(1)} s`);
      results.push(result);
    }
    const report = buildReport({
      date,
      mode: options.quick ? "quick" : "full",
      machine,
      durationSeconds: (Date.now() - began) / 1000,
      results,
      notes: [
        `load average at end: ${loadavg()
          .map((v) => v.toFixed(2))
          .join(
            ", ",
          )} (the machine is shared: compare ratios within one run, not absolute figures across runs)`,
        "Headline numbers use synchronous_commit=on, set on every benchmark database.",
      ],
    });
    const out = options.out ?? DEFAULT_OUT;
    writeReport(out, report);
    process.stdout.write(`${renderTable(report)}\n\nJSON: ${out}\n`);
  } finally {
    const launched = dbosHolder.launch ? await dbosHolder.launch : null;
    if (launched && !("error" in launched)) await launched.stop().catch(() => undefined);
    await env.cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`bench failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);

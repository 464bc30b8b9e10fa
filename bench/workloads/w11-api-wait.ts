import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ExecutionClient } from "../../src/engine/execution-client.js";
import { ExecutionQueue } from "../../src/runtime/execution-queue.js";
import { PgExecutionQueries } from "../../src/store/pg-execution-queries.js";
import { PgExecutionStore } from "../../src/store/pg-execution-store.js";
import { createRedisConnection } from "../../src/transport/redis-connection.js";
import { expectResult } from "../lib/checked-result.js";
import { nowMs } from "../lib/concurrency.js";
import { summarize } from "../lib/stats.js";
import { runExecution, TenorSystem } from "../systems/tenor.js";
import { measure, notMeasured, type Workload } from "./types.js";

const STEPS = 10;
const WARMUP_RUNS = 3;
const WORKFLOW = "bench.noop-chain";
const EXPECTED = { done: STEPS };
const API_SCRIPT = fileURLToPath(new URL("../tenor-api.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Spawns bench/tenor-api.ts and resolves with its port and API key once it listens. */
async function spawnApi(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number; key: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", API_SCRIPT], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = await new Promise<{ port: number; key: string }>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error("bench/tenor-api.ts not ready within 30 s")), 30_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split("\n").find((l) => l.includes('"ready":true'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as { port: number; key: string });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`bench/tenor-api.ts exited (${code}) before it was ready`));
    });
  });
  return { child, ...ready };
}

/**
 * W11: what an API client waits for a result with `Prefer: wait`, next to the engine's own
 * completion latency of the same 10-step workflow, and next to the polling wait the API used
 * before notifications (20 ms doubling). Serial, interleaved sample by sample so load hits all
 * three alike; the headline is the ratio of medians.
 */
export const w11ApiWait: Workload = {
  id: "W11",
  title: "API Prefer: wait latency",
  async run(ctx) {
    const runs = ctx.quick ? 20 : 60;
    const url = await ctx.env.freshDatabase("w11");
    const tenor = await TenorSystem.start({
      databaseUrl: url,
      redisUrl: ctx.env.redisUrl,
      prefix: ctx.env.prefix("w11-tenor"),
    });
    const redis = createRedisConnection(ctx.env.redisUrl, "producer");
    const prefix = tenor.config.redisPrefix;
    const queue = new ExecutionQueue(redis, prefix, tenor.logger);
    // The wait as it was before notifications: the client's own polling (no `finished`).
    const polling = new ExecutionClient({
      registry: tenor.registry,
      store: new PgExecutionStore(tenor.pool),
      queries: new PgExecutionQueries(tenor.pool),
      transport: queue,
    });
    let api: ChildProcess | undefined;
    try {
      const spawned = await spawnApi({
        DATABASE_URL: url,
        REDIS_URL: ctx.env.redisUrl,
        TENOR_REDIS_PREFIX: prefix,
      });
      api = spawned.child;
      const { key } = spawned;
      const endpoint = `http://127.0.0.1:${spawned.port}/v1/workflows/${WORKFLOW}/executions`;
      const samples = { engine: [] as number[], api: [] as number[], poll: [] as number[] };
      const tenorResult = await measure(ctx, "tenor (engine, api, polling interleaved)", async () => {
        for (let run = -WARMUP_RUNS; run < runs; run++) {
          const engine = await tenor.chain(STEPS);
          let t = nowMs();
          const res = await fetch(endpoint, {
            method: "POST",
            headers: {
              authorization: `Bearer ${key}`,
              prefer: "wait=30",
              "content-type": "application/json",
            },
            body: JSON.stringify({ steps: STEPS }),
          });
          const body = (await res.json()) as { status?: string; result?: unknown };
          const apiMs = nowMs() - t;
          if (res.status !== 200 || body.status !== "completed")
            throw new Error(`Prefer: wait answered ${res.status} ${JSON.stringify(body)}`);
          expectResult("Prefer: wait", body.result, EXPECTED);
          t = nowMs();
          await runExecution(polling, WORKFLOW, { steps: STEPS }, EXPECTED);
          const pollMs = nowMs() - t;
          if (run < 0) continue;
          samples.engine.push(engine);
          samples.api.push(apiMs);
          samples.poll.push(pollMs);
        }
        const engine = summarize(samples.engine);
        const apiWait = summarize(samples.api);
        const poll = summarize(samples.poll);
        return {
          status: "ok",
          figures: {
            engineMsP50: engine.p50,
            apiWaitMsP50: apiWait.p50,
            apiWaitMsP99: apiWait.p99,
            pollingWaitMsP50: poll.p50,
            apiOverEngineP50: apiWait.p50 / engine.p50,
            pollingOverEngineP50: poll.p50 / engine.p50,
          },
          details: { engine, apiWait, poll },
        };
      });
      return {
        id: "W11",
        title: "API Prefer: wait latency",
        status: "ok",
        params: {
          workflow: `${WORKFLOW} (${STEPS} steps)`,
          runs,
          warmupRuns: WARMUP_RUNS,
          order: "engine, API, polling client interleaved sample by sample",
          engine:
            "as W1: ExecutionClient.start, then waitForTerminal (the runner's announcement, then the read), output checked",
          api: "POST with Prefer: wait=30 to the API in its own process (bench/tenor-api.ts) over loopback HTTP, until the 200 response is read and its output checked",
          polling: "ExecutionClient without notifications: start, then reads from 20 ms doubling to 500 ms",
        },
        systems: {
          floor: notMeasured("no API"),
          bullmq: notMeasured("no API"),
          dbos: notMeasured("not wired behind an HTTP API here"),
          tenor: tenorResult,
        },
      };
    } finally {
      if (api && api.exitCode === null) {
        const exited = new Promise((resolve) => api?.once("exit", resolve));
        api.kill("SIGTERM");
        await exited;
      }
      await queue.close().catch(() => undefined);
      redis.disconnect();
      await tenor.stop();
    }
  },
};

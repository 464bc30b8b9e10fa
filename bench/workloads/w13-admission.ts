import { type ChildProcess, spawn } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import type { AdmissionSettings } from "../../src/api/admission.js";
import { loadConfig } from "../../src/config/load-config.js";
import { nowMs, sleep } from "../lib/concurrency.js";
import { percentile, ratio, round } from "../lib/stats.js";
import { measure, notMeasured, type Workload, type WorkloadContext } from "./types.js";

const API_SCRIPT = fileURLToPath(new URL("../admission-api.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The shipped pool and admission defaults (src/config/schema.ts), with load shedding at 0.95. */
const DEFAULTS = loadConfig({
  env: { DATABASE_URL: "postgresql://localhost/x", REDIS_URL: "redis://localhost" },
});
const POOL_MAX = DEFAULTS.database.poolMax;
const ADMISSION_ON: AdmissionSettings = { ...DEFAULTS.api.admission, maxEventLoopUtilization: 0.95 };

interface Run {
  acceptedP50Ms: number;
  acceptedP99Ms: number;
  refusalRate: number;
  accepted: number;
  refused: number;
  /** Neither 202 nor 503: a 500 from the pool's connection timeout, a reset connection. */
  other: number;
  maxInFlight: number;
  wallMs: number;
}

/** The API in its own process, with the default pool size (bench/admission-api.ts); resolves with its port and a key. */
async function startApi(
  ctx: WorkloadContext,
  label: string,
  admission: AdmissionSettings | undefined,
): Promise<{ child: ChildProcess; port: number; key: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", API_SCRIPT], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: await ctx.env.freshDatabase(label),
      REDIS_URL: ctx.env.redisUrl,
      TENOR_REDIS_PREFIX: ctx.env.prefix(label),
      W13_POOL_MAX: String(POOL_MAX),
      W13_ADMISSION: admission ? JSON.stringify(admission) : "",
    },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const ready = await new Promise<{ port: number; key: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the W13 API sent no ready within 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`the W13 API exited with ${code}`)));
    child.on("message", (message: { type?: string; port?: number; key?: string }) => {
      if (message.type !== "ready") return;
      clearTimeout(timer);
      resolve({ port: message.port as number, key: message.key as string });
    });
  });
  return { child, ...ready };
}

async function stopApi(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.send({ type: "stop" });
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Start requests over node:http with a keep-alive agent (fetch costs the load generator several times the CPU). */
function startSender(port: number, key: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const body = JSON.stringify({ steps: 1 });
  const send = (): Promise<{ status: number; ms: number }> =>
    new Promise((resolve) => {
      const t = nowMs();
      const req = request(
        {
          agent,
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/v1/workflows/bench.noop-chain/executions",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.once("end", () => resolve({ status: res.statusCode ?? 0, ms: nowMs() - t }));
        },
      );
      req.once("error", () => resolve({ status: 0, ms: nowMs() - t }));
      req.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/**
 * The API's capacity on this machine now: accepted starts per second with `CAPACITY_CLIENTS`
 * clients each sending its next request when the last one was answered.
 */
async function capacity(port: number, key: string, ms: number): Promise<number> {
  const { send, close } = startSender(port, key);
  for (let i = 0; i < 20; i++) await send(); // warm-up, one at a time
  let accepted = 0;
  const begun = nowMs();
  await Promise.all(
    Array.from({ length: CAPACITY_CLIENTS }, async () => {
      while (nowMs() - begun < ms) if ((await send()).status === 202) accepted++;
    }),
  );
  close();
  return accepted / ((nowMs() - begun) / 1000);
}

/** Closed-loop clients of the capacity measurement: enough to keep the pool busy. */
const CAPACITY_CLIENTS = 64;
/** Arrival rate of the overload runs, as a multiple of the measured capacity. */
const OVERLOAD = 1.5;

/**
 * Open loop: `rate` start requests per second for `seconds`, whatever the answers, as clients
 * behind a load balancer arrive. A closed loop would hide overload (a refused client asks again at
 * once, so in-flight requests never fall).
 */
async function drive(port: number, key: string, rate: number, seconds: number): Promise<Run> {
  const { send, close } = startSender(port, key);
  for (let i = 0; i < 20; i++) await send(); // warm-up, one at a time
  const total = Math.round(rate * seconds);
  const answers: Promise<{ status: number; ms: number }>[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const begun = nowMs();
  for (let i = 0; i < total; i++) {
    const due = begun + (i * 1000) / rate;
    const wait = due - nowMs();
    if (wait > 1) await sleep(wait);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    answers.push(
      send().finally(() => {
        inFlight--;
      }),
    );
  }
  const results = await Promise.all(answers);
  close();
  const accepted = results.filter((r) => r.status === 202).map((r) => r.ms);
  const refused = results.filter((r) => r.status === 503).length;
  return {
    acceptedP50Ms: percentile(accepted, 50),
    acceptedP99Ms: percentile(accepted, 99),
    refusalRate: refused / total,
    accepted: accepted.length,
    refused,
    other: total - accepted.length - refused,
    maxInFlight,
    wallMs: nowMs() - begun,
  };
}

async function run(
  ctx: WorkloadContext,
  label: string,
  admission: AdmissionSettings | undefined,
  rate: number,
  seconds: number,
): Promise<Run> {
  const api = await startApi(ctx, label, admission);
  try {
    return await drive(api.port, api.key, rate, seconds);
  } finally {
    await stopApi(api.child);
  }
}

/**
 * W13: the API past saturation, admission control off and on in one run, at the same arrival rate
 * (docs/operations.md, "Start, drain, overload"). Without admission every request queues for a
 * connection and latency grows with the backlog until the pool's connection timeout answers 500;
 * with it the excess is refused at once (503 + Retry-After) and accepted requests keep a bounded
 * p99. `p99OffOverOn` is the figure to watch, `otherAnswers.on` must stay 0.
 */
export const w13Admission: Workload = {
  id: "W13",
  title: "admission past saturation",
  async run(ctx) {
    const seconds = ctx.quick ? 4 : 10;
    const peer = notMeasured("an API property: no peer serves this API");
    let rate = 0;
    let measuredCapacity = 0;
    const tenor = await measure(ctx, "tenor", async () => {
      // Past saturation on this machine today: a fixed rate would fall behind the API as it gets faster.
      const probe = await startApi(ctx, "w13-capacity", undefined);
      try {
        measuredCapacity = await capacity(probe.port, probe.key, ctx.quick ? 1_000 : 2_000);
      } finally {
        await stopApi(probe.child);
      }
      rate = Math.ceil(measuredCapacity * OVERLOAD);
      const off = await run(ctx, "w10-off", undefined, rate, seconds);
      const on = await run(ctx, "w10-on", ADMISSION_ON, rate, seconds);
      const p99Ratio = ratio(off.acceptedP99Ms, on.acceptedP99Ms);
      return {
        status: "ok" as const,
        figures: {
          acceptedP99Ms: { off: off.acceptedP99Ms, on: on.acceptedP99Ms },
          refusalRate: { off: off.refusalRate, on: on.refusalRate },
          ...(p99Ratio !== null ? { p99OffOverOn: round(p99Ratio) ?? p99Ratio } : {}),
          otherAnswers: { off: off.other, on: on.other },
        },
        details: { off, on },
      };
    });
    return {
      id: "W13",
      title: "admission past saturation",
      status: "ok",
      params: {
        capacityPerSec: Math.round(measuredCapacity),
        overload: `${OVERLOAD}× the capacity measured first (${CAPACITY_CLIENTS} closed-loop clients, admission off)`,
        ratePerSec: rate,
        seconds,
        poolMax: POOL_MAX,
        admission: ADMISSION_ON,
        endpoint: "POST start",
      },
      systems: { floor: peer, bullmq: peer, dbos: peer, tenor },
    };
  },
};

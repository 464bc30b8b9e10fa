import { type CallOutcome, closedLoop, errorCount, type LoopResult } from "../lib/closed-loop.js";
import { nowMs } from "../lib/concurrency.js";
import { KeepAliveHttp } from "../lib/keep-alive-http.js";
import { ResourceSampler, type ResourceUsage } from "../lib/resource-sampler.js";
import { summarize } from "../lib/stats.js";
import { DEPLOYED_API_CONFIG, DEPLOYED_WORKFLOW, TenorDeployed } from "../systems/tenor-deployed.js";
import { measure, notMeasured, type SystemResult, type Workload, type WorkloadContext } from "./types.js";

const STEPS = 10;
/** Clients, each sending its next request when its last one was answered. */
const CLIENTS = 100;
const WARMUP_WORKFLOWS = 100;
/** RFC 7240 wait, in seconds: the API's default cap (`api.maxPreferWaitSeconds`). */
const PREFER = "wait=30";
const PATH = `/v1/workflows/${DEPLOYED_WORKFLOW}/executions`;

function workflows(quick: boolean): number {
  return quick ? 2_000 : 6_000;
}

type Path = "api" | "engine";
/** Engine and API halves in ABBA order, so a drift in load over the run hits both alike. */
const ORDER: readonly Path[] = ["engine", "api", "api", "engine"];

/**
 * W16: Tenor as deployed, driven through its API. The compiled api and runner roles in their own
 * processes on product defaults; 100 closed-loop HTTP clients on keep-alive connections, each
 * starting a 10-step `demo.steps` with `Prefer: wait` and counting it only when the 200 carries
 * the completed, checked result. The same closed loop through the client library (the
 * `tenor-deployed` system: start + waitForTerminal) against the same runner, in the same run,
 * gives `apiOverEngine`: what the API costs over the engine's own throughput.
 */
export const w16ApiClosedLoop: Workload = {
  id: "W16",
  title: "API closed loop (deployed)",
  async run(ctx) {
    const count = workflows(ctx.quick);
    const tenor = await measure(ctx, "tenor (compiled api + runner)", () => apiAndEngine(ctx, count));
    return {
      id: "W16",
      title: "API closed loop (deployed)",
      status: "ok",
      params: {
        workflows: count,
        workflow: `${DEPLOYED_WORKFLOW} { steps: ${STEPS}, stepMs: 0 }`,
        clients: CLIENTS,
        warmupWorkflows: `${WARMUP_WORKFLOWS} per path, untimed`,
        order:
          "ABBA: each path runs its workflows in two halves, in the order client library, API, API, client library",
        api: `POST ${PATH} with Prefer: ${PREFER}, Authorization: Bearer <integrator key from 'tenor keys create'>, on a keep-alive http.Agent (${CLIENTS} sockets); a workflow counts when the 200 carries status completed and result.done = ${STEPS}, anything else is an error`,
        engine:
          "createExecutionClient in the bench process (own pool of 20 and Redis connection): start, then waitForTerminal until the completed, checked output",
        roles:
          "node dist/workers/main.js (built by npm run build at the start of the run), one api and one runner; environment DATABASE_URL, REDIS_URL, TENOR_REDIS_PREFIX, the ports, TENOR_LOG_LEVEL=info (the default)",
        nonDefaults: `api role only, its configuration file ${JSON.stringify(DEPLOYED_API_CONFIG)}: api.rateLimit (default 2000 per 10 s per key), because a throughput benchmark does not test a rate limit; admission control on its defaults (a closed loop must be admitted; W13 tests it past saturation); the runner has no configuration file`,
      },
      systems: {
        floor: notMeasured("no API"),
        bullmq: notMeasured("no API"),
        dbos: notMeasured("not wired behind an HTTP API here"),
        tenor,
      },
    };
  },
};

async function apiAndEngine(ctx: WorkloadContext, count: number): Promise<SystemResult> {
  const url = await ctx.env.freshDatabase("w16");
  const tenor = await TenorDeployed.start({
    databaseUrl: url,
    redisUrl: ctx.env.redisUrl,
    prefix: ctx.env.prefix("w16-tenor"),
    runners: 1,
    api: true,
  });
  const http = new KeepAliveHttp(tenor.apiUrl as string, CLIENTS);
  const samplerPool = ctx.env.pool(url, 1, "tenor-bench-sampler");
  const roles = [...tenor.runners, ...(tenor.api ? [tenor.api] : [])];
  try {
    const key = tenor.apiKey as string;
    const calls: Record<Path, () => Promise<CallOutcome>> = {
      api: () => viaApi(http, key),
      engine: async () => ({ ms: await tenor.chain(STEPS) }),
    };
    const warmup = {
      engine: await closedLoop(WARMUP_WORKFLOWS, CLIENTS, calls.engine),
      api: await closedLoop(WARMUP_WORKFLOWS, CLIENTS, calls.api),
    };
    const runs: Record<Path, LoopResult[]> = { api: [], engine: [] };
    const resources: Array<{ path: Path } & ResourceUsage> = [];
    for (const path of ORDER) {
      ctx.log(`    ${path} ...`);
      const sampler = await ResourceSampler.start(samplerPool, ctx.env.redis, roles);
      runs[path].push(await closedLoop(count / 2, CLIENTS, calls[path]));
      resources.push({ path, ...(await sampler.stop()) });
    }
    const api = pooled(runs.api);
    const engine = pooled(runs.engine);
    const errors = errorCount(api);
    if (errors > 0) for (const role of roles) role.keepLog();
    const apiLatency = summarize(api.durations);
    const engineLatency = summarize(engine.durations);
    return {
      status: "ok",
      figures: {
        stepsPerSec: api.stepsPerSec,
        latencyMsP50: apiLatency.p50,
        latencyMsP99: apiLatency.p99,
        errors,
        engineStepsPerSec: engine.stepsPerSec,
        apiOverEngine: api.stepsPerSec / engine.stepsPerSec,
      },
      details: {
        api: { completed: api.durations.length, wallMs: api.wallMs, latency: apiLatency },
        engine: { completed: engine.durations.length, wallMs: engine.wallMs, latency: engineLatency },
        errorsByKind: api.errors,
        errorExamples: api.examples,
        warmupErrorsByKind: warmup.api.errors,
        resources,
        ...(errors > 0 ? { logs: roles.map((r) => r.logPath) } : {}),
      },
    };
  } finally {
    http.close();
    await samplerPool.end().catch(() => undefined);
    await tenor.stop();
  }
}

/**
 * One request: the start with `Prefer: wait`, until the answer is read. Only a 200 whose body is
 * the completed execution with the expected result counts; anything else is an error kind.
 */
async function viaApi(http: KeepAliveHttp, key: string): Promise<CallOutcome> {
  const began = nowMs();
  let answer: { status: number; text: string };
  try {
    answer = await http.post(PATH, { authorization: `Bearer ${key}`, prefer: PREFER }, { steps: STEPS });
  } catch (error) {
    return { error: `network: ${(error as Error).message}` };
  }
  const ms = nowMs() - began;
  if (answer.status !== 200) return { error: `${answer.status}: ${answer.text.slice(0, 300)}` };
  let body: { status?: string; result?: { done?: unknown } | null };
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    return { error: `unparsable 200: ${answer.text.slice(0, 300)}` };
  }
  if (body.status !== "completed") return { error: `200 ${body.status}: ${answer.text.slice(0, 300)}` };
  if (body.result?.done !== STEPS) return { error: `wrong result: ${JSON.stringify(body.result)}` };
  return { ms };
}

/** The runs of one path as one: every latency, every error, steps per second over their wall times. */
function pooled(runs: readonly LoopResult[]): LoopResult & { stepsPerSec: number } {
  const errors: Record<string, number> = {};
  const examples: Record<string, string[]> = {};
  for (const run of runs) {
    for (const [kind, n] of Object.entries(run.errors)) errors[kind] = (errors[kind] ?? 0) + n;
    for (const [kind, list] of Object.entries(run.examples))
      examples[kind] = [...(examples[kind] ?? []), ...list].slice(0, 3);
  }
  const durations = runs.flatMap((r) => r.durations);
  const wallMs = runs.reduce((a, r) => a + r.wallMs, 0);
  return { durations, errors, examples, wallMs, stepsPerSec: (durations.length * STEPS) / (wallMs / 1000) };
}

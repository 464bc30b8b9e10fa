import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetry, type TelemetryHandle } from "../../src/observability/telemetry.js";
import { createFaultWorld, type FaultWorld, waitsFor } from "../runtime/fault-harness.js";
import { freePort } from "../support/ports.js";
import { killAllProcesses, repoRoot, waitUntil } from "../support/processes.js";
import { eventually, spawnRole } from "../support/role-process.js";

/**
 * One trace per execution across processes (docs/operations.md, "Traces"). This process plays the
 * API: its spans go to an in-memory exporter. Runners are real processes exporting OTLP/HTTP JSON
 * to a tiny collector run here, so spans of the API and of two runners (one killed with SIGKILL)
 * meet in one trace, joined only through the traceparent PostgreSQL keeps with the execution.
 */

interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  scope: string;
  service: string;
  /** service.version and vcs.ref.head.revision of the resource. */
  release: string;
  pid: number | null;
  attributes: Record<string, unknown>;
  events: string[];
}

const packageVersion = (JSON.parse(readFileSync(`${repoRoot}/package.json`, "utf8")) as { version: string })
  .version;
const memory = new InMemorySpanExporter();
const collected: CollectedSpan[] = [];
let collector: Server;
let collectorUrl: string;
let telemetry: TelemetryHandle;
let world: FaultWorld;

beforeAll(async () => {
  // Before the world: its queue reads whether this process traces when it is built.
  telemetry = startTelemetry(
    "api",
    { commit: "0123abc" },
    { spanProcessors: [new SimpleSpanProcessor(memory)] },
  );
  const port = await freePort();
  collector = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      if (req.url === "/v1/traces") collected.push(...parseOtlpJson(JSON.parse(body)));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => collector.listen(port, "127.0.0.1", resolve));
  collectorUrl = `http://127.0.0.1:${port}`;
  world = await createFaultWorld(import.meta.url);
});

afterAll(async () => {
  await killAllProcesses();
  await world?.close();
  await telemetry?.shutdown();
  await new Promise((resolve) => collector?.close(resolve));
});

function runnerEnv(): Record<string, string> {
  return {
    DAPI_ROLE: "runner",
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    // Finished spans leave within 50 ms, so a runner killed later has exported them.
    OTEL_BSP_SCHEDULE_DELAY: "50",
    TENOR_COMMIT: "0123abc",
  };
}

/** Starts an execution the way the API does: inside the span of the request. */
async function startInRequest(
  workflow: string,
  input: unknown,
): Promise<{ id: string; request: ReadableSpan }> {
  const tracer = trace.getTracer("test-api");
  return tracer.startActiveSpan(
    `POST /v1/workflows/${workflow}/executions`,
    { kind: SpanKind.SERVER },
    async (span) => {
      try {
        return { id: await world.start(workflow, input), request: span as unknown as ReadableSpan };
      } finally {
        span.end();
      }
    },
  );
}

/** Every span of one trace, from this process and from the collector. */
function traceSpans(traceId: string): CollectedSpan[] {
  const local = memory
    .getFinishedSpans()
    .filter((s) => s.spanContext().traceId === traceId)
    .map(
      (s): CollectedSpan => ({
        traceId,
        spanId: s.spanContext().spanId,
        parentSpanId: s.parentSpanContext?.spanId ?? null,
        name: s.name,
        scope: s.instrumentationScope.name,
        service: String(s.resource.attributes["service.name"]),
        release: `${s.resource.attributes["service.version"]}@${s.resource.attributes["vcs.ref.head.revision"]}`,
        pid: process.pid,
        attributes: { ...s.attributes },
        events: s.events.map((e) => e.name),
      }),
    );
  return [...local, ...collected.filter((s) => s.traceId === traceId)];
}

/** Asserts one tree: a single root (the request) and every other span's parent present. */
function expectOneTree(spans: CollectedSpan[], rootId: string): Map<string, CollectedSpan> {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const orphans = spans.filter((s) => s.spanId !== rootId && !(s.parentSpanId && byId.has(s.parentSpanId)));
  expect(orphans.map((s) => `${s.name} (${s.scope}, pid ${s.pid})`)).toEqual([]);
  return byId;
}

const named = (spans: CollectedSpan[], name: string) => spans.filter((s) => s.name === name);

describe("traces", () => {
  it("a workflow with steps, an activity, a child and a timer is one tree under the API request", async () => {
    const runner = await world.startRunner("A", { env: runnerEnv() });
    const { id, request } = await startInRequest("chaos.mixed", { tag: "t", sleepMs: 200 });
    await world.waitForView(id, "waiting on signal go", (v) => waitsFor(v, "signal", "go"));
    await world.client.signal(id, "go", { value: "v" });
    await world.waitForCompleted(id);
    const traceId = request.spanContext().traceId;
    const spans = await waitUntil("the runner exported the final turn", async () => {
      const all = traceSpans(traceId);
      return all.some(
        (s) => s.name === "turn chaos.mixed" && s.attributes["tenor.turn.outcome"] === "completed",
      ) &&
        all.some((s) => s.name === "turn chaos.child" && s.attributes["tenor.turn.outcome"] === "completed")
        ? all
        : false;
    });
    const byId = expectOneTree(spans, request.spanContext().spanId);
    const parentName = (s: CollectedSpan) => byId.get(s.parentSpanId ?? "")?.name;

    const [root] = named(spans, "execution chaos.mixed");
    expect(root?.parentSpanId).toBe(request.spanContext().spanId);
    expect(root?.service).toBe("tenor-api");
    expect(root?.release).toBe(`${packageVersion}@0123abc`);
    const turns = named(spans, "turn chaos.mixed");
    // The timer and the child and the signal each end a turn: one trace spans them all.
    expect(turns.length).toBeGreaterThanOrEqual(3);
    for (const turn of turns) {
      expect(turn.parentSpanId).toBe(root?.spanId);
      expect(turn.service).toBe("tenor-runner");
      expect(turn.release).toBe(`${packageVersion}@0123abc`);
    }
    expect(turns.some((t) => t.events.includes("parked"))).toBe(true);
    for (const step of ["step start", "step fetch", "step save", "step finish"]) {
      expect(named(spans, step).length, step).toBeGreaterThan(0);
      for (const s of named(spans, step)) expect(parentName(s)).toBe("execution chaos.mixed");
    }
    expect(named(spans, "step fetch")).toHaveLength(3);
    const [activity] = named(spans, "activity chaos.quote");
    expect(activity && parentName(activity)).toBe("execution chaos.mixed");
    const [child] = named(spans, "execution chaos.child");
    expect(child?.parentSpanId).toBe(root?.spanId);
    for (const s of [...named(spans, "turn chaos.child"), ...named(spans, "step child.work")])
      expect(s.parentSpanId).toBe(child?.spanId);
    await runner.kill();
  });

  it("spans of a runner killed with SIGKILL and of the runner that took over join one trace", async () => {
    const a = await world.startRunner("A", { env: runnerEnv() });
    const gate = "tracing-kill";
    const { id, request } = await startInRequest("fault.steps", { steps: 3, gateAt: 1, gate });
    const traceId = request.spanContext().traceId;
    // A finished s0 (its span is exported) and is inside s1's work.
    await waitUntil("runner A exported step s0", async () =>
      traceSpans(traceId).some((s) => s.name === "step s0" && s.pid === a.pid),
    );
    await waitUntil("s1 running on A", async () => (await world.sideEffects(id)).s1?.length === 1);
    const b = await world.startRunner("B", { env: runnerEnv() });
    await a.kill();
    await world.openGate(gate);
    await world.waitForCompleted(id);
    const spans = await waitUntil("runner B exported the final turn", async () => {
      const all = traceSpans(traceId);
      return all.some(
        (s) => s.name === "turn fault.steps" && s.attributes["tenor.turn.outcome"] === "completed",
      )
        ? all
        : false;
    });
    expectOneTree(spans, request.spanContext().spanId);
    const pidsOf = (name: string) => named(spans, name).map((s) => s.pid);
    expect(pidsOf("step s0")).toEqual([a.pid]);
    // s1's span on A never ended (A died inside it); B ran s1 again and s2.
    expect(pidsOf("step s1")).toEqual([b.pid]);
    expect(pidsOf("step s2")).toEqual([b.pid]);
    const turnPids = new Set(pidsOf("turn fault.steps"));
    expect(turnPids.has(b.pid)).toBe(true);
    await b.kill();
  });
});

describe("a role process with tracing configured", () => {
  it("exports HTTP and pg spans as tenor-api, none for probes, and exits 2 on an invalid OTEL_* variable", async () => {
    const apiPort = await freePort();
    const env = {
      ...runnerEnv(),
      DAPI_ROLE: "api",
      DATABASE_URL: world.db.url,
      REDIS_URL: world.redisUrl,
      TENOR_REDIS_PREFIX: world.prefix,
      TENOR_API_PORT: String(apiPort),
    };
    const api = spawnRole(env);
    try {
      await eventually(
        "api ready",
        async () => (await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status === 200,
      );
      // An unknown key: the API looks it up in PostgreSQL, then answers 401.
      const unknownKey = `tnr_${"x".repeat(43)}`;
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/executions`, {
        headers: { authorization: `Bearer ${unknownKey}` },
      });
      expect(res.status).toBe(401);
      const requestSpan = (s: CollectedSpan) =>
        s.service === "tenor-api" &&
        s.name.startsWith("GET") &&
        JSON.stringify(s.attributes).includes("/v1/executions");
      const server = await waitUntil(
        "the api exported its request span",
        async () => collected.find(requestSpan) ?? false,
      );
      expect(server.release).toBe(`${packageVersion}@0123abc`);
      expect(server.parentSpanId).toBeNull();
      // The key lookup ran inside the request: its pg spans are in the request's trace.
      await waitUntil("a pg span in the request's trace", async () =>
        collected.some((s) => s.traceId === server.traceId && s.scope.includes("instrumentation-pg")),
      );
      expect(
        collected.some((s) => s.service === "tenor-api" && JSON.stringify(s.attributes).includes("/readyz")),
      ).toBe(false);
    } finally {
      api.kill("SIGTERM");
      await api.exited;
    }
    const invalid = spawnRole({ ...env, OTEL_EXPORTER_OTLP_PROTOCOL: "http" });
    expect((await invalid.exited).code).toBe(2);
    expect(invalid.output()).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL = "http": one of grpc, http/protobuf, http/json',
    );
  });
});

// OTLP/JSON (the JavaScript exporter's http/json): ids are hex strings.
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}
interface OtlpBody {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: OtlpAttribute[];
        events?: { name: string }[];
      }[];
    }[];
  }[];
}

function attributes(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    list.map((a) => [
      a.key,
      a.value.stringValue ?? a.value.intValue ?? a.value.boolValue ?? a.value.doubleValue,
    ]),
  );
}

function parseOtlpJson(body: OtlpBody): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ? span.parentSpanId : null,
          name: span.name,
          scope: scopeSpans.scope?.name ?? "",
          service: String(resource["service.name"]),
          release: `${resource["service.version"]}@${resource["vcs.ref.head.revision"]}`,
          pid: resource["process.pid"] === undefined ? null : Number(resource["process.pid"]),
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((e) => e.name),
        });
      }
    }
  }
  return out;
}

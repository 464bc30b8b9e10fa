import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { context, trace } from "@opentelemetry/api";
import { node } from "@opentelemetry/sdk-node";
import { describe, expect, it } from "vitest";
import {
  CATEGORY_OF_COMPONENT,
  createLogger,
  LOG_CATEGORIES,
  LOG_COMPONENTS,
  republishProcessWarnings,
  resolveLogFormat,
} from "../../src/observability/logger.js";

function capture() {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
  });
  return { stream, lines };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("logger", () => {
  it("writes one JSON object per line with the component and scope of a child logger", async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ stream, base: { role: "runner" } }).child({
      component: "engine",
      executionId: "e-1",
    });
    logger.info("turn started", { turn: 3 });
    await tick();
    expect(lines[0]).toMatchObject({
      level: "info",
      message: "turn started",
      component: "engine",
      executionId: "e-1",
      role: "runner",
      turn: 3,
    });
    expect(typeof lines[0]?.timestamp).toBe("string");
  });

  it("respects the level", async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ stream, level: "warn" });
    logger.info("hidden");
    logger.warn("shown");
    await tick();
    expect(lines.map((l) => l.message)).toEqual(["shown"]);
  });

  it("republishes process warnings under the category dapi.process", async () => {
    const { stream, lines } = capture();
    const fakeProcess = new EventEmitter() as unknown as NodeJS.Process;
    const stop = republishProcessWarnings(createLogger({ stream }).child({ component: "main" }), fakeProcess);
    const warning = Object.assign(new Error("something is deprecated"), {
      name: "DeprecationWarning",
      code: "DEP0999",
    });
    fakeProcess.emit("warning", warning);
    stop();
    fakeProcess.emit("warning", warning);
    await tick();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "warn",
      category: "dapi.process",
      message: "something is deprecated",
      warningName: "DeprecationWarning",
      warningCode: "DEP0999",
    });
  });

  it("redacts secrets from every line, whatever the call site passes", async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ stream }).child({ component: "store" });
    class Pool {
      options = { connectionString: "postgres://svc:S3cretPw@db/tenor" };
    }
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    logger.error("connect postgres://svc:S3cretPw@db/tenor failed", {
      connectionString: "postgres://svc:S3cretPw@db/tenor",
      options: {
        databaseUrl: "postgresql://svc:S3cretPw@db:5432/tenor",
        password: "S3cretPw",
        nested: [{ apiKey: "x" }],
      },
      headers: { authorization: "Bearer tnr_abcdefghijklmnop" },
      session: { accessToken: "S3cretPw-as-token" },
      token: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      note: "key tnr_abcdefghijklmnopqrstu was used with Basic dXNlcjpTM2NyZXRQdw==",
      pool: new Pool(),
      error: new Error("password authentication failed for postgres://svc:S3cretPw@db"),
      cyclic,
    });
    await tick();
    const text = JSON.stringify(lines);
    expect(text).not.toContain("S3cretPw");
    expect(text).not.toContain("tnr_abcdefghijklmnop");
    expect(text).not.toContain("dXNlcjpTM2NyZXRQdw");
    expect(lines[0]).toMatchObject({
      message: "connect postgres://svc:[redacted]@db/tenor failed",
      connectionString: "[redacted]",
      options: { databaseUrl: "postgresql://svc:[redacted]@db:5432/tenor", password: "[redacted]" },
      headers: { authorization: "[redacted]" },
      pool: "[Pool]",
      session: { accessToken: "[redacted]" },
      token: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      cyclic: { name: "loop", self: "[cycle]" },
    });
    expect(String((lines[0]?.error as { message?: string } | undefined)?.message)).toContain(
      "svc:[redacted]@db",
    );
  });

  it("files every line under a category of the closed list, from its component", async () => {
    const { stream, lines } = capture();
    const root = createLogger({ stream });
    root.info("no component");
    root.child({ component: "api" }).info("request");
    root.child({ component: "sweep" }).warn("took over");
    root.child({ component: "store" }).info("own category", { category: "dapi.telemetry" });
    root.child({ component: "store" }).info("unknown category", { category: "dapi.nonsense" });
    await tick();
    expect(lines.map((line) => line.category)).toEqual([
      "dapi.process",
      "dapi.api",
      "dapi.engine",
      "dapi.telemetry",
      "dapi.store",
    ]);
    for (const component of LOG_COMPONENTS)
      expect(LOG_CATEGORIES).toContain(CATEGORY_OF_COMPONENT[component]);
  });

  it("chooses readable text for a terminal and JSON for anything else", () => {
    expect(resolveLogFormat("auto", { isTTY: true })).toBe("text");
    expect(resolveLogFormat("auto", { isTTY: false })).toBe("json");
    expect(resolveLogFormat("auto", {})).toBe("json");
    expect(resolveLogFormat("json", { isTTY: true })).toBe("json");
    expect(resolveLogFormat("text", {})).toBe("text");
  });

  it("writes one readable, redacted line per entry when the stream is a TTY", async () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true });
    let text = "";
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    const logger = createLogger({ stream, base: { role: "runner" } }).child({
      component: "engine",
      executionId: "e-1",
    });
    logger.info("turn started", { turn: 3, note: "two words", url: "postgres://svc:S3cretPw@db/tenor" });
    await tick();
    const lines = text.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}dapi\.engine \[runner\/engine\] turn started executionId=e-1 turn=3 note="two words" url=postgres:\/\/svc:\[redacted\]@db\/tenor$/,
    );
    expect(() => JSON.parse(lines[0] ?? "")).toThrow();
  });
});

describe("logger inside a trace", () => {
  it("puts the active span's trace and span id on every line written inside it, and none outside", async () => {
    const provider = new node.NodeTracerProvider();
    provider.register();
    try {
      const { stream, lines } = capture();
      const logger = createLogger({ stream }).child({ component: "engine" });
      const ids = await provider.getTracer("test").startActiveSpan("turn", async (span) => {
        logger.info("inside");
        await tick();
        logger.warn("still inside, after an await");
        span.end();
        return span.spanContext();
      });
      logger.info("outside");
      await tick();
      expect(lines.map((l) => [l.message, l.traceId, l.spanId])).toEqual([
        ["inside", ids.traceId, ids.spanId],
        ["still inside, after an await", ids.traceId, ids.spanId],
        ["outside", undefined, undefined],
      ]);
    } finally {
      await provider.shutdown();
      trace.disable();
      context.disable();
    }
  });
});

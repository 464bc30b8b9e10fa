import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, republishProcessWarnings } from "../../src/observability/logger.js";

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
});

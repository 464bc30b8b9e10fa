import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { TenorError } from "../../src/errors/tenor-error.js";
import { createLogger } from "../../src/observability/logger.js";
import { StartupFailed, startWithRelaunch } from "../../src/roles/startup-relaunch.js";

/** The startup relaunch budget, on a virtual clock: no I/O, no waiting. */

function harness(failures: Error[]) {
  let now = 0;
  const sleeps: number[] = [];
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  let cleanups = 0;
  let attempts = 0;
  const run = () =>
    startWithRelaunch(
      async () => {
        attempts++;
        now += 100; // each attempt takes 100 ms of the budget
        const failure = failures.shift();
        if (failure) throw failure;
        return "started";
      },
      async () => void cleanups++,
      {
        policy: { relaunchBudgetMs: 5_000, initialDelayMs: 500, maxDelayMs: 2_000 },
        logger: createLogger({ stream }),
        clock: () => now,
        sleep: async (ms) => {
          sleeps.push(ms);
          now += ms;
        },
      },
    );
  return { run, sleeps, lines, counts: () => ({ attempts, cleanups }) };
}

const unreachable = () =>
  new TenorError("DEPENDENCY_UNREACHABLE", "Redis at redis://x:1 is unreachable", { retryable: true });

describe("startWithRelaunch", () => {
  it("retries a dependency failure with growing delays, cleaning up each attempt, until it starts", async () => {
    const h = harness([unreachable(), unreachable(), unreachable()]);
    expect(await h.run()).toBe("started");
    expect(h.sleeps).toEqual([500, 1_000, 2_000]);
    expect(h.counts()).toEqual({ attempts: 4, cleanups: 3 });
    expect(h.lines.map((l) => l.message)).toEqual(Array(3).fill("role failed to start; relaunching"));
    expect(h.lines[0]).toMatchObject({ code: "DEPENDENCY_UNREACHABLE", attempts: 1, nextDelayMs: 500 });
  });

  it("gives up when the next attempt would start past the budget, logging why", async () => {
    const h = harness(Array.from({ length: 20 }, unreachable));
    const failure = await h.run().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StartupFailed);
    expect((failure as StartupFailed).budgetExhausted).toBe(true);
    // 100 + 500 + 100 + 1000 + 100 + 2000 + 100 = 3900; + 2000 would pass 5000.
    expect(h.sleeps).toEqual([500, 1_000, 2_000]);
    expect(h.lines.at(-1)).toMatchObject({
      message: "startup relaunch budget exhausted; exiting",
      code: "DEPENDENCY_UNREACHABLE",
      attempts: 4,
      budgetMs: 5_000,
    });
  });

  it("ends at once on a failure retrying cannot fix", async () => {
    const h = harness([new TenorError("SHARD_COUNT_MISMATCH", "shard count differs")]);
    const failure = await h.run().catch((error: unknown) => error);
    expect((failure as StartupFailed).failure.code).toBe("SHARD_COUNT_MISMATCH");
    expect((failure as StartupFailed).budgetExhausted).toBe(false);
    expect(h.sleeps).toEqual([]);
    expect(h.counts()).toEqual({ attempts: 1, cleanups: 1 });
  });
});

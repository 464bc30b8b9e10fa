import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllProcesses } from "../support/processes.js";
import { explore, formatReport } from "./explorer.js";
import { createExplorerWorld, type ExplorerWorld } from "./world.js";

/**
 * The fault-point explorer (docs/engine.md, "The fault-point explorer"). `npm test` runs the short
 * form: every shape's clean runs and a deterministic sample of (point × fault) covering every fault
 * kind. `npm run fault-points` (FAULT_POINTS=all) runs every point × fault;
 * `npm run fault-points -- --only '<shape>/<point>/<fault>'` replays one run (FAULT_POINTS_ONLY,
 * comma-separated). FAULT_POINTS_SHAPES limits the shapes; FAULT_POINTS_SEED picks the sample;
 * FAULT_POINTS_REPORT=<file> also writes the printed report there; FAULT_POINTS_VERBOSE=1 lists every point.
 */

const only = process.env.FAULT_POINTS_ONLY ? process.env.FAULT_POINTS_ONLY.split(",").filter(Boolean) : null;
const mode = process.env.FAULT_POINTS === "all" ? "all" : "short";
const shapes = process.env.FAULT_POINTS_SHAPES ? process.env.FAULT_POINTS_SHAPES.split(",") : null;
/** The default seed is fixed, so `npm test` explores the same sample on every machine. */
const seed = Number(process.env.FAULT_POINTS_SEED ?? 25);

let world: ExplorerWorld;

beforeAll(async () => {
  world = await createExplorerWorld(import.meta.url);
}, 120_000);

afterAll(async () => {
  await world?.close();
  await killAllProcesses();
});

describe("fault-point explorer", () => {
  it(
    `${only ? "replay" : mode} form: every run ends as the clean run does, or with the typed failure its fault explains`,
    async () => {
      const report = await explore(world, {
        mode,
        only,
        shapes,
        seed,
        verbose: process.env.FAULT_POINTS_VERBOSE === "1",
        log: (line) => console.log(line),
      });
      const text = formatReport(report);
      console.log(text);
      if (process.env.FAULT_POINTS_REPORT) writeFileSync(process.env.FAULT_POINTS_REPORT, `${text}\n`);
      // The explorer itself must see the engine's traffic, or it proves nothing.
      for (const shape of report.shapes) {
        const cleanFailed = report.failures.some((f) => f.name === `${shape.shape}/clean`);
        if (!cleanFailed)
          expect(shape.pgPoints, `${shape.shape}: no PostgreSQL points seen`).toBeGreaterThan(0);
        if (!cleanFailed)
          expect(shape.redisPoints, `${shape.shape}: no Redis points seen`).toBeGreaterThan(0);
      }
      expect(report.failures.map((f) => `${f.name}: ${f.problems.join("; ")}`)).toEqual([]);
    },
    mode === "all" || only ? 6 * 3_600_000 : 300_000,
  );
});

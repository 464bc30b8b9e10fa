import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropDatabase } from "../../src/store/migrations/index.js";
import { compiledTree } from "../support/compiled-tree.js";
import { scratchDatabaseUrl } from "../support/database.js";
import { freePort, spawnProcess } from "../support/processes.js";
import { deleteRedisPrefix, redisUrl, testRedisPrefix } from "../support/redis.js";
import { eventually } from "../support/role-process.js";

/**
 * The compiled image's contract, run once: `npm run start:migrate` migrates an empty database and
 * `npm start` runs each role, from a directory holding only dist/, prisma/, package.json and
 * node_modules (no source tree, nothing through tsx). Each role becomes ready, the image's
 * HEALTHCHECK command agrees, each serves /metrics, and every role stops cleanly on SIGTERM.
 */

const prefix = testRedisPrefix(import.meta.url);
const databaseUrl = scratchDatabaseUrl();
let tree: ReturnType<typeof compiledTree>;

beforeAll(() => {
  tree = compiledTree();
}, 180_000);

afterAll(async () => {
  await deleteRedisPrefix(prefix);
  await dropDatabase(databaseUrl);
  rmSync(tree.dir, { recursive: true, force: true });
});

/** Runs a package.json script's command line directly (what `npm run` would exec), in the tree. */
function runScript(name: string, env: Record<string, string>) {
  const [program, ...args] = tree.scripts[name]!.split(" ");
  expect(program).toBe("node");
  return runNode(args, env);
}

/** The Dockerfile's HEALTHCHECK command. */
function runHealthcheck(env: Record<string, string>) {
  return runNode(["dist/scripts/healthcheck.js"], env);
}

function runNode(args: string[], env: Record<string, string>) {
  const node = spawnProcess(`node ${args.join(" ")}`, process.execPath, args, { cwd: tree.dir, env });
  return { child: node.child, exited: node.exit.then(({ code }) => code), output: node.output };
}

describe("compiled image", () => {
  it("migrates, then runs every role from dist/ until SIGTERM", async () => {
    const migrate = runScript("start:migrate", { DATABASE_URL: databaseUrl });
    expect(await migrate.exited, migrate.output()).toBe(0);
    expect(migrate.output()).toMatch(/Applied \d+ of \d+ migrations/);

    const ports = { api: await freePort(), runner: await freePort(), indexer: await freePort() };
    // /metrics: the api's on its health port, never on the public API port.
    const metricsPorts = { ...ports, api: await freePort() };
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl(),
      TENOR_REDIS_PREFIX: prefix,
      TENOR_API_PORT: String(ports.api),
      TENOR_API_HEALTH_PORT: String(metricsPorts.api),
      TENOR_RUNNER_HEALTH_PORT: String(ports.runner),
      TENOR_INDEXER_HEALTH_PORT: String(ports.indexer),
      TENOR_DATABASE_POOL_MAX: "4",
    };
    const roles = (["api", "runner", "indexer"] as const).map((role) => ({
      role,
      port: ports[role],
      process: runScript("start", { ...env, DAPI_ROLE: role }),
    }));
    try {
      for (const { role, port, process } of roles) {
        await eventually(
          `${role} ready (${process.output().slice(-400)})`,
          async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
          60_000,
        );
      }
      for (const { role } of roles) {
        const metrics = await fetch(`http://127.0.0.1:${metricsPorts[role]}/metrics`);
        expect(await metrics.text()).toContain(`tenor_process_cpu_seconds_total{role="${role}"}`);
        const check = runHealthcheck({ ...env, DAPI_ROLE: role });
        expect(await check.exited, check.output()).toBe(0);
      }
      for (const { process } of roles) process.child.kill("SIGTERM");
      for (const { role, process } of roles) {
        expect(await process.exited, `${role}: ${process.output().slice(-400)}`).toBe(0);
      }
      const stopped = runHealthcheck({ ...env, DAPI_ROLE: "runner" });
      expect(await stopped.exited).toBe(1);
    } finally {
      for (const { process } of roles) if (process.child.exitCode === null) process.child.kill("SIGKILL");
    }
  });
});

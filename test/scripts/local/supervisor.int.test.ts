import { afterEach, describe, expect, it } from "vitest";
import { freeRolePorts, isAlive, type LocalRun, runLocal, startedPids } from "./supervisor-harness.js";

/**
 * The local supervisor against real processes: scripts/local.ts supervising the fake role fixture,
 * so these tests hold whatever the real roles do.
 */

const runs: LocalRun[] = [];
const start = (args: string[], env: Record<string, string>) => {
  const run = runLocal(args, env);
  runs.push(run);
  return run;
};

afterEach(async () => {
  // A failed assertion must not leave a supervisor or its roles behind for the next test.
  for (const run of runs.splice(0)) {
    for (const pid of startedPids(run.stderr()).values()) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    if (run.process.exitCode === null && run.process.signalCode === null) run.process.kill("SIGKILL");
  }
});

const ALL_READY = /all roles ready/;

describe("local supervisor", () => {
  it("prefixes every line with its role, joins split lines and adds no colour on a pipe", async () => {
    const run = start(["--wait-ready"], await freeRolePorts());
    await run.waitFor(ALL_READY);
    run.process.kill("SIGTERM");
    expect((await run.exit).code).toBe(0);

    const stdout = run.stdout();
    const stderr = run.stderr();
    for (const role of ["api", "runner", "indexer"]) {
      const label = role.padEnd("supervisor".length);
      expect(stdout).toContain(`${label} | fake ${role} started pid=`);
      expect(stdout).toContain(`${label} | fake ${role} split-line joined\n`);
      expect(stderr).toContain(`${label} | fake ${role} says hello on stderr\n`);
    }
    // Every line carries a known prefix: nothing leaks through unprefixed.
    for (const line of (stdout + stderr).split("\n").filter((l) => l !== "")) {
      expect(line).toMatch(/^(api|runner|indexer|supervisor) +\| /);
    }
    expect(stdout + stderr).not.toContain("\u001b[");
  });

  it.each(["SIGTERM", "SIGINT"] as const)("stops every role when the supervisor gets %s", async (signal) => {
    const run = start(["--wait-ready"], await freeRolePorts());
    await run.waitFor(ALL_READY);
    const pids = startedPids(run.stderr());
    expect([...pids.keys()]).toEqual(["api", "runner", "indexer"]);
    for (const pid of pids.values()) expect(isAlive(pid)).toBe(true);

    run.process.kill(signal);
    expect(await run.exit).toEqual({ code: 0, signal: null });
    for (const pid of pids.values()) expect(isAlive(pid)).toBe(false);
    // Stopped gracefully (SIGTERM reached each role), not killed.
    for (const role of pids.keys()) expect(run.stdout()).toContain(`fake ${role} stopping on SIGTERM`);
    expect(run.stderr()).not.toContain("sent SIGKILL");
  });

  it("names a crashed role, stops the others and exits non-zero", async () => {
    const run = start([], { ...(await freeRolePorts()), FAKE_CRASH_ROLE: "runner", FAKE_CRASH_CODE: "7" });
    const { code } = await run.exit;
    expect(code).toBe(1);
    const stderr = run.stderr();
    expect(stderr).toContain("SUPERVISOR_CHILD_EXITED: role runner exited unexpectedly (exit code 7)");
    // The role's own last words come before the supervisor's verdict.
    expect(stderr.indexOf("fake runner crashing on purpose")).toBeLessThan(
      stderr.indexOf("exited unexpectedly"),
    );
    expect(stderr).toMatch(/exiting 1 because role runner exited unexpectedly/);
    for (const role of ["api", "indexer"]) expect(run.stdout()).toContain(`fake ${role} stopping on SIGTERM`);
    for (const pid of startedPids(stderr).values()) expect(isAlive(pid)).toBe(false);
  });

  it("SIGKILLs a role that ignores SIGTERM once the grace period is over", async () => {
    const graceMs = 600;
    const run = start(["--wait-ready", "--grace-ms", String(graceMs)], {
      ...(await freeRolePorts()),
      FAKE_IGNORE_SIGTERM_ROLE: "indexer",
    });
    await run.waitFor(ALL_READY);
    const pids = startedPids(run.stderr());
    const signalledAt = Date.now();
    run.process.kill("SIGTERM");
    await run.waitFor(/fake indexer ignoring SIGTERM/);
    expect(isAlive(pids.get("indexer")!)).toBe(true);

    const { code } = await run.exit;
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(graceMs);
    expect(code).toBe(1);
    expect(run.stderr()).toContain(`role indexer did not stop within ${graceMs} ms; sent SIGKILL`);
    expect(run.stderr()).toContain("role indexer killed (signal SIGKILL)");
    expect(run.stderr()).toContain("role api stopped (exit code 0)");
    for (const pid of pids.values()) expect(isAlive(pid)).toBe(false);
  });

  // The timeout leaves a loaded machine time to start the fake role, so /readyz has answered (503).
  it("gives up when a role never becomes ready, naming it and what /readyz said", async () => {
    const run = start(["--wait-ready", "--ready-timeout-ms", "4000"], {
      ...(await freeRolePorts()),
      FAKE_NEVER_READY_ROLE: "indexer",
    });
    const { code } = await run.exit;
    expect(code).toBe(1);
    expect(run.stderr()).toMatch(
      /SUPERVISOR_READY_TIMEOUT: not ready after 4000 ms: indexer \(last: HTTP 503\)/,
    );
    expect(run.stderr()).not.toContain("all roles ready");
    for (const pid of startedPids(run.stderr()).values()) expect(isAlive(pid)).toBe(false);
  });

  it("starts only the roles asked for", async () => {
    const run = start(["--roles", "api,indexer", "--wait-ready"], await freeRolePorts());
    await run.waitFor(ALL_READY);
    run.process.kill("SIGTERM");
    expect((await run.exit).code).toBe(0);
    expect([...startedPids(run.stderr()).keys()]).toEqual(["api", "indexer"]);
    expect(run.stdout()).not.toContain("fake runner");
  });

  it("refuses an unknown role before starting anything", async () => {
    const run = start(["--roles", "api,worker"], await freeRolePorts());
    expect((await run.exit).code).toBe(2);
    expect(run.stderr()).toContain('unknown role "worker"; allowed roles are api, runner, indexer');
    expect(startedPids(run.stderr()).size).toBe(0);
  });
});

import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../src/transport/queue-names.js";
import { type RolesHarness, startRolesHarness } from "../cli/support/roles-harness.js";
import { runTenor } from "../cli/support/run-cli.js";
import { killAllProcesses } from "../support/processes.js";
import { redisUrl } from "../support/redis.js";
import { eventually } from "../support/role-process.js";

/**
 * Operator control of the runners' schedules across real processes (docs/schedules.md, "Pause,
 * resume, trigger"): the api role pauses, resumes and triggers; the runner role, restarted in
 * between, follows what PostgreSQL says; the `tenor` CLI drives the same routes.
 */
let h: RolesHarness;
let redis: Redis;
let schedules: Queue;

beforeAll(async () => {
  // Several roles and CLI processes share two cores: event-loop lag must not turn requests into 503s.
  h = await startRolesHarness(import.meta.url, { shedOnEventLoopLag: false });
  redis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
  schedules = new Queue(QUEUE_NAMES.schedules, { connection: redis, prefix: h.prefix });
}, 200_000);

afterAll(async () => {
  await schedules?.close();
  redis?.disconnect();
  await killAllProcesses();
  await h?.stop();
});

const as = (person: "platformOperator" | "platformAdmin" | "operator") => ({
  ...h.env,
  TENOR_API_KEY: h.keys[person],
});

async function runsOf(schedule: string) {
  const { rows } = await h.pool.query<{
    window_start: Date;
    attempt: number;
    outcome: string;
    triggered_by: string | null;
  }>(
    "SELECT window_start, attempt, outcome::text AS outcome, triggered_by FROM schedule_runs WHERE schedule = $1 ORDER BY id",
    [schedule],
  );
  return rows;
}

async function audits(action: string) {
  const { rows } = await h.pool.query<{
    subject: string;
    role: string;
    target: string;
    outcome: string;
    org_id: string | null;
  }>("SELECT subject, role, target, outcome, org_id FROM audit_events WHERE action = $1 ORDER BY id", [
    action,
  ]);
  return rows;
}

describe("the schedules view", () => {
  it("shows every schedule's cadence in ms and in words and the job scheduler's next run, to platform keys", async () => {
    await eventually("the runner registered its schedules", async () => {
      const res = await h.call("platformOperator", "GET", "/v1/platform/schedules");
      return res.status === 200 && res.body.items.some((s: { name: string }) => s.name === "retention");
    });
    const res = await h.call("platformOperator", "GET", "/v1/platform/schedules");
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    const byName = Object.fromEntries(res.body.items.map((s: { name: string }) => [s.name, s]));
    expect(byName["execution-sweep"]).toMatchObject({
      cadenceMs: 500,
      cadenceText: "every 500 ms",
      paused: null,
    });
    expect(byName.retention).toMatchObject({
      cadenceMs: 86_400_000,
      cadence: { kind: "cron", pattern: "17 3 * * *", tz: "UTC" },
      cadenceText: "daily at 03:17 UTC",
      nextRunSource: "scheduler",
    });
    const scheduler = await schedules.getJobScheduler("retention");
    expect(Date.parse(byName.retention.nextRunAt)).toBe(scheduler?.next);
    expect(new Date(byName.retention.nextRunAt).toISOString()).toMatch(/T03:17:00\.000Z$/);

    const org = await h.call("operator", "GET", "/v1/platform/schedules");
    expect(org.status).toBe(403);
    expect(org.body.code).toBe("FORBIDDEN");

    const list = await runTenor(["schedules", "list"], as("platformOperator"));
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^SCHEDULE\s+STATE\s+CADENCE\s+NEXT RUN\s+LAST ATTEMPT/);
    expect(list.stdout).toMatch(/retention\s+\S+\s+daily at 03:17 UTC\s+\d{4}-\d\d-\d\dT03:17:00\.000Z/);
    const json = JSON.parse((await runTenor(["schedules", "list", "--json"], as("platformOperator"))).stdout);
    expect(json.map((s: { name: string }) => s.name)).toEqual(
      res.body.items.map((s: { name: string }) => s.name),
    );
  }, 60_000);
});

describe("pause and resume", () => {
  it("a pause by platform-admin holds across a runner restart: no job scheduler, no runs, state paused; resume brings it back", async () => {
    const refused = await h.call("platformOperator", "POST", "/v1/platform/schedules/execution-sweep/pause");
    expect(refused.status).toBe(403);

    const pause = await runTenor(["schedules", "pause", "execution-sweep"], as("platformAdmin"));
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toContain("execution-sweep paused");
    await eventually(
      "the runner removed the sweep's job scheduler",
      async () => !(await schedules.getJobScheduler("execution-sweep")),
    );
    const before = (await runsOf("execution-sweep")).length;

    await h.restartRunner();
    // The new runner's boot upsert ran before it turned ready: it did not re-create the scheduler.
    expect(await schedules.getJobScheduler("execution-sweep")).toBeUndefined();
    // The restarted runner takes schedule ticks (a triggered retention runs), yet the sweep records nothing.
    const trigger = await h.call("platformAdmin", "POST", "/v1/platform/schedules/retention/trigger");
    expect(trigger.status).toBe(202);
    await eventually("the retention tick on the restarted runner", async () =>
      (await runsOf("retention")).some((r) => r.outcome !== "running"),
    );
    expect((await runsOf("execution-sweep")).length).toBe(before);
    const status = await h.call("operator", "GET", "/v1/platform/status");
    const sweep = status.body.schedules.find((s: { name: string }) => s.name === "execution-sweep");
    expect(sweep).toMatchObject({
      state: "paused",
      lateByMs: 0,
      nextRunAt: null,
      paused: { by: "platformAdmin" },
    });

    const paused = await runTenor(["schedules", "trigger", "execution-sweep"], as("platformAdmin"));
    expect(paused.code).toBe(1);
    expect(paused.stderr).toContain("409 SCHEDULE_PAUSED");

    const resume = await runTenor(["schedules", "resume", "execution-sweep"], as("platformAdmin"));
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout).toContain("execution-sweep resumed");
    await eventually("the sweep's job scheduler restored", async () =>
      Boolean(await schedules.getJobScheduler("execution-sweep")),
    );
    await eventually("the sweep runs again", async () => (await runsOf("execution-sweep")).length > before);
    const again = await h.call("platformOperator", "GET", "/v1/platform/schedules");
    const resumed = again.body.items.find((s: { name: string }) => s.name === "execution-sweep");
    expect(resumed.paused).toBeNull();
    expect(["ok", "running", "pending"]).toContain(resumed.state);

    expect(await audits("schedule.pause")).toEqual([
      {
        subject: "platformOperator",
        role: "platform-operator",
        target: "execution-sweep",
        outcome: "FORBIDDEN",
        org_id: null,
      },
      {
        subject: "platformAdmin",
        role: "platform-admin",
        target: "execution-sweep",
        outcome: "accepted",
        org_id: null,
      },
    ]);
    expect(await audits("schedule.resume")).toEqual([
      {
        subject: "platformAdmin",
        role: "platform-admin",
        target: "execution-sweep",
        outcome: "accepted",
        org_id: null,
      },
    ]);
    expect((await audits("schedule.trigger")).map((a) => a.outcome)).toContain("SCHEDULE_PAUSED");
  }, 180_000);
});

describe("trigger now", () => {
  it("runs one tick through a runner under the window's cycle key, recorded with who asked; refuses while a run holds a lease", async () => {
    const first = await h.call("platformAdmin", "POST", "/v1/platform/schedules/retention/trigger");
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      schedule: "retention",
      window: expect.stringMatching(/T00:00:00\.000Z$/),
    });
    const window = new Date(first.body.window).getTime();
    const ofWindow = async () =>
      (await runsOf("retention")).filter((r) => r.window_start.getTime() === window);
    await eventually("the triggered run finished", async () =>
      (await ofWindow()).some((r) => r.outcome !== "running" && r.triggered_by === "platformAdmin"),
    );
    const [run] = await ofWindow();
    const attempt = run?.attempt ?? 0;
    // The same window again: a further attempt of its one row, never a second row.
    const cli = await runTenor(["schedules", "trigger", "retention"], as("platformAdmin"));
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/window:\s+\d{4}-\d\d-\d\dT00:00:00\.000Z/);
    await eventually("the second triggered attempt", async () =>
      (await ofWindow()).some((r) => r.attempt > attempt && r.outcome !== "running"),
    );
    expect(await ofWindow()).toHaveLength(1);

    // A run holding a live lease: the trigger is refused, naming the run.
    await h.pool.query(
      `INSERT INTO schedule_runs (schedule, window_start, attempt, outcome, runner_id, lease_until)
       VALUES ('retention', '2000-01-01T00:00:00Z', 1, 'running', 'busy-runner', now() + interval '1 hour')`,
    );
    const busy = await h.call("platformAdmin", "POST", "/v1/platform/schedules/retention/trigger");
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({
      code: "SCHEDULE_RUNNING",
      details: { schedule: "retention", window: "2000-01-01T00:00:00.000Z", runnerId: "busy-runner" },
    });
    await h.pool.query("DELETE FROM schedule_runs WHERE runner_id = 'busy-runner'");

    const unknown = await h.call("platformAdmin", "POST", "/v1/platform/schedules/no-such-schedule/trigger");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({
      code: "SCHEDULE_NOT_FOUND",
      details: { schedule: "no-such-schedule" },
    });
    const unknownCli = await runTenor(["schedules", "pause", "no-such-schedule"], as("platformAdmin"));
    expect(unknownCli.code).toBe(1);
    expect(unknownCli.stderr).toContain("404 SCHEDULE_NOT_FOUND");
    const usage = await runTenor(["schedules", "pause"], as("platformAdmin"));
    expect(usage.code).toBe(2);

    const triggers = await audits("schedule.trigger");
    expect(
      triggers.filter((a) => a.target === "retention" && a.outcome === "accepted").length,
    ).toBeGreaterThanOrEqual(3);
    expect(triggers).toContainEqual(
      expect.objectContaining({ target: "retention", outcome: "SCHEDULE_RUNNING" }),
    );
    expect(triggers).toContainEqual(
      expect.objectContaining({ target: "no-such-schedule", outcome: "SCHEDULE_NOT_FOUND" }),
    );
  }, 120_000);
});

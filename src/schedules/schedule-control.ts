import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { QUEUE_NAMES } from "../transport/queue-names.js";
import { describeCadence, describeEvery, nextRunFromCadence } from "./cadence-text.js";
import { windowStart } from "./schedule-definition.js";
import { readScheduleStatuses, type ScheduleStatus } from "./schedule-status.js";
import { type ScheduleJobData, TICK_JOB_OPTIONS } from "./scheduler-upsert.js";
import {
  type LiveRun,
  liveRun,
  pauseSchedule,
  resumeSchedule,
  type ScheduleActor,
} from "./store/pg-schedule-control.js";

/**
 * One schedule as an operator reads it: its status, its cadence in words, and when it runs next.
 * `nextRunSource` says where that time comes from: `scheduler`, the BullMQ job scheduler's own
 * next time (what will run); `definition`, computed from the cadence the same way BullMQ does,
 * when Redis holds no scheduler for it right now (just resumed, or Redis lost it: a runner
 * restores it within seconds); null with no time while paused or with no stored cadence.
 */
export type ScheduleView = ScheduleStatus & {
  cadenceText: string;
  nextRunAt: Date | null;
  nextRunSource: "scheduler" | "definition" | null;
};

/** How a pause or resume went: unknown name, or the schedule as it is now. */
export type ScheduleChange =
  | { kind: "not-found" }
  | { kind: "done"; changed: boolean; schedule: ScheduleView };

/** How a trigger went: unknown, paused, a run still under way, or a tick queued for the runners. */
export type TriggerResult =
  | { kind: "not-found" }
  | { kind: "paused"; pausedAt: Date; pausedBy: string | null }
  | { kind: "running"; run: LiveRun }
  | { kind: "queued"; window: Date; requestedAt: Date; jobId: string };

/**
 * What an operator does to the runners' schedules (docs/schedules.md, "Pause, resume, trigger"),
 * from the api role: reads them with their next run, pauses and resumes them in PostgreSQL (the
 * runners follow within their keeper interval; ticks check the pause when they claim), and asks
 * for a tick now by adding one job to the `schedules` queue, which a runner runs like any tick.
 */
export interface ScheduleControl {
  list(): Promise<ScheduleView[]>;
  pause(name: string, actor: ScheduleActor): Promise<ScheduleChange>;
  resume(name: string, actor: ScheduleActor): Promise<ScheduleChange>;
  trigger(name: string, actor: ScheduleActor): Promise<TriggerResult>;
  close(): Promise<void>;
}

export function scheduleControl(options: { pool: Pool; redis: Redis; prefix: string }): ScheduleControl {
  const { pool } = options;
  const queue = new Queue<ScheduleJobData>(QUEUE_NAMES.schedules, {
    connection: options.redis,
    prefix: options.prefix,
  });
  const list = async (): Promise<ScheduleView[]> => {
    const [statuses, schedulers] = await Promise.all([
      readScheduleStatuses(pool),
      queue.getJobSchedulers(0, -1),
    ]);
    const nextByName = new Map(schedulers.map((s) => [s.key, s.next]));
    const now = Date.now();
    return statuses.map((status) => scheduleView(status, nextByName.get(status.name), now));
  };
  const changed = async (
    name: string,
    change: { found: boolean; changed?: boolean },
  ): Promise<ScheduleChange> => {
    if (!change.found) return { kind: "not-found" };
    const schedule = (await list()).find((s) => s.name === name);
    return schedule ? { kind: "done", changed: change.changed === true, schedule } : { kind: "not-found" };
  };
  return {
    list,
    pause: async (name, actor) => changed(name, await pauseSchedule(pool, name, actor)),
    resume: async (name) => changed(name, await resumeSchedule(pool, name)),
    async trigger(name, actor) {
      const status = (await readScheduleStatuses(pool)).find((s) => s.name === name);
      if (!status) return { kind: "not-found" };
      if (status.pausedAt) return { kind: "paused", pausedAt: status.pausedAt, pausedBy: status.pausedBy };
      const run = await liveRun(pool, name);
      if (run) return { kind: "running", run };
      const requestedAt = Date.now();
      const cadence = status.cadence ?? { kind: "every", everyMs: status.cadenceMs };
      // No job id of ours: two triggers of one window are two jobs, and the cycle key decides.
      const job = await queue.add(
        name,
        { schedule: name, trigger: { by: actor.subject, requestedAt } },
        { ...TICK_JOB_OPTIONS, jobId: `trigger-${randomUUID()}` },
      );
      return {
        kind: "queued",
        window: windowStart(cadence, new Date(requestedAt)),
        requestedAt: new Date(requestedAt),
        jobId: job.id ?? "",
      };
    },
    close: () => queue.close(),
  };
}

/** A status with its cadence in words and its next run (see {@link ScheduleView}). */
export function scheduleView(
  status: ScheduleStatus,
  schedulerNext: number | null | undefined,
  now: number,
): ScheduleView {
  const cadenceText = status.cadence ? describeCadence(status.cadence) : describeEvery(status.cadenceMs);
  if (status.pausedAt) return { ...status, cadenceText, nextRunAt: null, nextRunSource: null };
  if (typeof schedulerNext === "number" && Number.isFinite(schedulerNext))
    return { ...status, cadenceText, nextRunAt: new Date(schedulerNext), nextRunSource: "scheduler" };
  const computed = status.cadence ? nextRunFromCadence(status.cadence, now) : null;
  return computed === null
    ? { ...status, cadenceText, nextRunAt: null, nextRunSource: null }
    : { ...status, cadenceText, nextRunAt: new Date(computed), nextRunSource: "definition" };
}

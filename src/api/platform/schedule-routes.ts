import type { Request, Response } from "express";
import { z } from "zod";
import type { ScheduleView } from "../../schedules/schedule-control.js";
import type { ApiDeps } from "../api-deps.js";
import { API_ERRORS } from "../api-error-codes.js";
import { anyPrincipalOf } from "../auth/authenticate.js";
import type { Permission } from "../auth/permissions.js";
import { parseRequest } from "../http.js";
import { problem, rolesNote } from "../openapi/common.js";
import { apiError } from "../problem.js";
import { defineRoute, type RouteDeclaration } from "../route.js";

const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

/** One runner schedule as the platform status and the schedules routes show it. */
export const ScheduleViewSchema = z
  .object({
    name: z.string(),
    state: z.enum(["ok", "running", "failing", "pending", "overdue", "stopped", "paused"]),
    cadenceMs: z.number().int().meta({ description: "Time between two ticks, in milliseconds." }),
    cadence: z
      .union([
        z.object({ kind: z.literal("every"), everyMs: z.number().int() }),
        z.object({
          kind: z.literal("cron"),
          pattern: z.string(),
          tz: z.string(),
          periodMs: z.number().int(),
        }),
      ])
      .nullable()
      .meta({
        description:
          "The definition's cadence as the runners registered it; null for an older release's row.",
      }),
    cadenceText: z
      .string()
      .meta({ description: "The cadence in words: `every 5 seconds`, `daily at 03:17 UTC`." }),
    nextRunAt: z.string().nullable().meta({ description: "When the next tick is due; null while paused." }),
    nextRunSource: z
      .enum(["scheduler", "definition"])
      .nullable()
      .meta({
        description:
          "`scheduler`: the BullMQ job scheduler's own next time; `definition`: computed from the cadence the same " +
          "way, while Redis holds no scheduler for it (a runner restores it within seconds).",
      }),
    lastAttemptAt: z.string().nullable(),
    lastOutcome: z.enum(["running", "succeeded", "empty", "failed"]).nullable(),
    lastDurationMs: z.number().int().nullable(),
    lastSuccessAt: z.string().nullable(),
    lastError: z.string().nullable(),
    consecutiveFailures: z.number().int(),
    lateByMs: z.number().int(),
    paused: z
      .object({ at: z.string(), by: z.string().nullable() })
      .nullable()
      .meta({ description: "Who paused it and when (the key's subject); null when it is not paused." }),
  })
  .meta({ id: "ScheduleView" });

const ScheduleListSchema = z
  .object({ generatedAt: z.string(), items: z.array(ScheduleViewSchema) })
  .meta({ id: "ScheduleList" });

const ScheduleChangeSchema = z
  .object({
    schedule: ScheduleViewSchema,
    changed: z.boolean().meta({ description: "False when it already was as asked (nothing changed)." }),
  })
  .meta({ id: "ScheduleChange" });

const TriggerAcceptedSchema = z
  .object({
    schedule: z.string(),
    window: z
      .string()
      .meta({ description: "The window the tick runs: the request time rounded down to the cadence." }),
    requestedAt: z.string(),
    jobId: z.string().meta({ description: "The tick's job on the `schedules` queue." }),
  })
  .meta({ id: "TriggerAccepted" });

const ScheduleNameParams = z.object({
  name: z
    .string()
    .min(1)
    .max(200)
    .meta({ description: "Schedule name (`retention`, `execution-sweep`, ...)." }),
});

/** A schedule for JSON: times as ISO strings, lateness in whole milliseconds. */
export function scheduleJson(view: ScheduleView): z.infer<typeof ScheduleViewSchema> {
  return {
    name: view.name,
    state: view.state,
    cadenceMs: view.cadenceMs,
    cadence: view.cadence,
    cadenceText: view.cadenceText,
    nextRunAt: view.nextRunAt?.toISOString() ?? null,
    nextRunSource: view.nextRunSource,
    lastAttemptAt: view.lastAttemptAt?.toISOString() ?? null,
    lastOutcome: view.lastOutcome,
    lastDurationMs: view.lastDurationMs,
    lastSuccessAt: view.lastSuccessAt?.toISOString() ?? null,
    lastError: view.lastError,
    consecutiveFailures: view.consecutiveFailures,
    lateByMs: Math.round(view.lateByMs),
    paused: view.pausedAt ? { at: view.pausedAt.toISOString(), by: view.pausedBy } : null,
  };
}

function scheduleNotFound(name: string) {
  return apiError(API_ERRORS.SCHEDULE_NOT_FOUND, `no runner schedule is named ${JSON.stringify(name)}`, {
    schedule: name,
  });
}

/** The acting key of a platform route: whose pause or trigger it is. */
function actorOf(res: Response) {
  const { subject, keyId } = anyPrincipalOf(res);
  return { subject, keyId };
}

/** What the pause and resume routes and the console's buttons do: one change, by one actor. */
export async function changeSchedule(
  deps: ApiDeps,
  action: "pause" | "resume",
  name: string,
  actor: { subject: string; keyId: string },
) {
  const result = await deps.schedules[action](name, actor);
  if (result.kind === "not-found") throw scheduleNotFound(name);
  return { schedule: scheduleJson(result.schedule), changed: result.changed };
}

/**
 * What the trigger route and the console's button do: SCHEDULE_NOT_FOUND, SCHEDULE_PAUSED or
 * SCHEDULE_RUNNING, else the tick is queued for the runners.
 */
export async function triggerSchedule(
  deps: ApiDeps,
  name: string,
  actor: { subject: string; keyId: string },
) {
  const result = await deps.schedules.trigger(name, actor);
  switch (result.kind) {
    case "not-found":
      throw scheduleNotFound(name);
    case "paused":
      throw apiError(
        API_ERRORS.SCHEDULE_PAUSED,
        `schedule ${name} is paused (by ${result.pausedBy ?? "unknown"} at ${result.pausedAt.toISOString()}); resume it first`,
        { schedule: name, pausedAt: result.pausedAt.toISOString(), pausedBy: result.pausedBy },
      );
    case "running":
      throw apiError(
        API_ERRORS.SCHEDULE_RUNNING,
        `schedule ${name} is running its window ${result.run.window.toISOString()} (attempt ${result.run.attempt} on ${result.run.runnerId}); trigger it again once that run ends`,
        {
          schedule: name,
          window: result.run.window.toISOString(),
          attempt: result.run.attempt,
          runnerId: result.run.runnerId,
          leaseUntil: result.run.leaseUntil.toISOString(),
        },
      );
    case "queued":
      return {
        schedule: name,
        window: result.window.toISOString(),
        requestedAt: result.requestedAt.toISOString(),
        jobId: result.jobId,
      };
  }
}

function listSchedules(deps: ApiDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    const items = (await deps.schedules.list()).map(scheduleJson);
    res.json({ generatedAt: new Date().toISOString(), items } satisfies z.infer<typeof ScheduleListSchema>);
  };
}

function changeRoute(action: "pause" | "resume") {
  return (deps: ApiDeps) =>
    async (req: Request, res: Response): Promise<void> => {
      const { name } = parseRequest(ScheduleNameParams, req.params, "path");
      res.json(await changeSchedule(deps, action, name, actorOf(res)));
    };
}

function triggerRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { name } = parseRequest(ScheduleNameParams, req.params, "path");
    res.status(202).json(await triggerSchedule(deps, name, actorOf(res)));
  };
}

const MANAGE: Permission = "schedulesManage";
const target = (req: Request) => String(req.params.name);

/** The runners' schedules for platform keys: the list, and pause, resume and trigger (audited). */
export const SCHEDULE_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "get",
    path: "/v1/platform/schedules",
    permission: "schedulesRead",
    openapi: {
      operationId: "listSchedules",
      tags: ["platform"],
      summary: "Every runner schedule with its cadence, next run, last run and pause",
      description:
        "Platform-wide. The state is the platform status's, plus `paused`: a paused schedule is never overdue. " +
        rolesNote("schedulesRead"),
      responses: { 200: { description: "The schedules, by name.", content: json(ScheduleListSchema) } },
    },
    handler: listSchedules,
  }),
  defineRoute({
    method: "post",
    path: "/v1/platform/schedules/{name}/pause",
    permission: MANAGE,
    audit: { action: "schedule.pause", target },
    openapi: {
      operationId: "pauseSchedule",
      tags: ["platform"],
      summary: "Pause a runner schedule",
      description:
        "Recorded in PostgreSQL, so it holds across runner restarts: its ticks claim nothing and record nothing, " +
        "and runners remove its job scheduler within seconds and do not re-create it when they start. A run " +
        "already under way finishes. Pausing a paused schedule changes nothing (`changed: false`) and keeps who " +
        `paused it first. Audited as \`schedule.pause\`. ${rolesNote(MANAGE)}`,
      request: { params: ScheduleNameParams },
      responses: {
        200: { description: "The schedule, now paused.", content: json(ScheduleChangeSchema) },
        404: problem("SCHEDULE_NOT_FOUND (`details.schedule`)."),
      },
    },
    handler: changeRoute("pause"),
  }),
  defineRoute({
    method: "post",
    path: "/v1/platform/schedules/{name}/resume",
    permission: MANAGE,
    audit: { action: "schedule.resume", target },
    openapi: {
      operationId: "resumeSchedule",
      tags: ["platform"],
      summary: "Resume a paused runner schedule",
      description:
        "Runners restore its job scheduler within seconds; its lateness counts from the resume. Resuming a " +
        `schedule that is not paused changes nothing (\`changed: false\`). Audited as \`schedule.resume\`. ${rolesNote(MANAGE)}`,
      request: { params: ScheduleNameParams },
      responses: {
        200: { description: "The schedule, no longer paused.", content: json(ScheduleChangeSchema) },
        404: problem("SCHEDULE_NOT_FOUND (`details.schedule`)."),
      },
    },
    handler: changeRoute("resume"),
  }),
  defineRoute({
    method: "post",
    path: "/v1/platform/schedules/{name}/trigger",
    permission: MANAGE,
    audit: { action: "schedule.trigger", target },
    openapi: {
      operationId: "triggerSchedule",
      tags: ["platform"],
      summary: "Run one tick of a runner schedule now",
      description:
        "Adds one tick to the `schedules` queue; a runner runs it like a scheduled tick, for the window of the " +
        "request time, under the same cycle key and lease. The window runs again even if it already finished " +
        "(every run is idempotent on its cycle key); a window running under a live lease is never run twice. " +
        "The run is recorded with `triggered_by`. Audited as `schedule.trigger`. " +
        rolesNote(MANAGE),
      request: { params: ScheduleNameParams },
      responses: {
        202: { description: "The tick is queued.", content: json(TriggerAcceptedSchema) },
        404: problem("SCHEDULE_NOT_FOUND (`details.schedule`)."),
        409: problem("SCHEDULE_PAUSED (resume it first) or SCHEDULE_RUNNING (a run holds a live lease)."),
      },
    },
    handler: triggerRoute,
  }),
];

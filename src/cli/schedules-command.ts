import { parseArgs } from "node:util";
import type { ApiClient } from "./api-client.js";
import { answerPrinter, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { formatDuration, renderFields, renderTable } from "./table.js";

/** One schedule as the API answers it (ScheduleView in the OpenAPI document). */
interface ScheduleView {
  name: string;
  state: string;
  cadenceMs: number;
  cadenceText: string;
  nextRunAt: string | null;
  nextRunSource: string | null;
  lastAttemptAt: string | null;
  lastOutcome: string | null;
  lastDurationMs: number | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  consecutiveFailures: number;
  lateByMs: number;
  paused: { at: string; by: string | null } | null;
}

/**
 * `tenor schedules list|status|pause|resume|trigger` (docs/console.md, "CLI"). `list` reads
 * `/v1/platform/schedules` (platform keys); `status` the same view from the platform status
 * (organisation operators too); the changes are platform-admin's, audited by the API.
 */
export async function runSchedulesCommand(
  args: readonly string[],
  api: ApiClient,
  io: CommandIo,
): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const print = answerPrinter(io, values.json);
  switch (action) {
    case "list": {
      const { items } = await api.get<{ items: ScheduleView[] }>("/v1/platform/schedules");
      print(items, () => renderSchedules(items));
      return EXIT.OK;
    }
    case "status": {
      const { schedules } = await api.get<{ schedules: ScheduleView[] }>("/v1/platform/status");
      print(schedules, () => renderSchedules(schedules));
      return EXIT.OK;
    }
    case "pause":
    case "resume": {
      const name = scheduleName(positionals, action);
      const body = await api.post<{ schedule: ScheduleView; changed: boolean }>(
        `/v1/platform/schedules/${encodeURIComponent(name)}/${action}`,
      );
      print(body, () => {
        const done = action === "pause" ? "paused" : "resumed";
        const was = action === "pause" ? "was already paused" : "was not paused";
        return `${name} ${body.changed ? done : was}\n${renderSchedule(body.schedule)}`;
      });
      return EXIT.OK;
    }
    case "trigger": {
      const name = scheduleName(positionals, action);
      const body = await api.post<{ schedule: string; window: string; requestedAt: string; jobId: string }>(
        `/v1/platform/schedules/${encodeURIComponent(name)}/trigger`,
      );
      print(body, () =>
        renderFields([
          ["queued", `a tick of ${body.schedule}; a runner runs it now`],
          ["window", body.window],
          ["requested", body.requestedAt],
          ["job", body.jobId],
        ]),
      );
      return EXIT.OK;
    }
    default:
      throw new UsageError(
        action ? `unknown schedules command ${JSON.stringify(action)}` : "name a schedules command",
      );
  }
}

function scheduleName(positionals: readonly string[], action: string): string {
  const [name, ...extra] = positionals;
  if (!name)
    throw new UsageError(`schedules ${action} needs a schedule name (tenor schedules list shows them)`);
  if (extra.length > 0)
    throw new UsageError(`schedules ${action} takes one schedule name, got ${positionals.length}`);
  return name;
}

function renderSchedules(schedules: readonly ScheduleView[]): string {
  return renderTable(
    [
      "SCHEDULE",
      "STATE",
      "CADENCE",
      "NEXT RUN",
      "LAST ATTEMPT",
      "OUTCOME",
      "DURATION",
      "LATE BY",
      "FAILURES",
      "PAUSED",
      "LAST ERROR",
    ],
    schedules.map((s) => [
      s.name,
      s.state,
      s.cadenceText,
      s.nextRunAt,
      s.lastAttemptAt,
      s.lastOutcome,
      s.lastDurationMs === null ? null : formatDuration(s.lastDurationMs),
      s.lateByMs > 0 ? formatDuration(s.lateByMs) : null,
      s.consecutiveFailures,
      s.paused ? `${s.paused.at} by ${s.paused.by ?? "?"}` : null,
      s.lastError,
    ]),
  );
}

function renderSchedule(s: ScheduleView): string {
  return renderFields([
    ["state", s.state],
    ["cadence", `${s.cadenceText} (${s.cadenceMs} ms)`],
    ["next run", s.nextRunAt],
    ["paused", s.paused ? `${s.paused.at} by ${s.paused.by ?? "?"}` : null],
    ["last attempt", s.lastAttemptAt],
    ["outcome", s.lastOutcome],
    ["last error", s.lastError],
  ]);
}

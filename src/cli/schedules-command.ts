import { parseArgs } from "node:util";
import type { ApiClient } from "./api-client.js";
import { type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { formatDuration, renderTable } from "./table.js";

interface ScheduleStatus {
  name: string;
  state: string;
  cadenceMs: number;
  lastAttemptAt: string | null;
  lastOutcome: string | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  consecutiveFailures: number;
  lateByMs: number;
}

/** `tenor schedules status`, from the platform status the api serves. */
export async function runSchedulesCommand(
  args: readonly string[],
  api: ApiClient,
  io: CommandIo,
): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "status") {
    throw new UsageError(
      action ? `unknown schedules command ${JSON.stringify(action)}` : "name a schedules command",
    );
  }
  const { values } = parseArgs({ args: rest, options: { json: { type: "boolean" } }, strict: true });
  const { schedules } = await api.get<{ schedules: ScheduleStatus[] }>("/v1/platform/status");
  io.stdout(
    values.json
      ? `${JSON.stringify(schedules, null, 2)}\n`
      : renderTable(
          [
            "SCHEDULE",
            "STATE",
            "EVERY",
            "LAST ATTEMPT",
            "OUTCOME",
            "LAST SUCCESS",
            "LATE BY",
            "FAILURES",
            "LAST ERROR",
          ],
          schedules.map((s) => [
            s.name,
            s.state,
            formatDuration(s.cadenceMs),
            s.lastAttemptAt,
            s.lastOutcome,
            s.lastSuccessAt,
            s.lateByMs > 0 ? formatDuration(s.lateByMs) : null,
            s.consecutiveFailures,
            s.lastError,
          ]),
        ),
  );
  return EXIT.OK;
}

import type { WaitDescriptor } from "../../engine/execution-store.js";
import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import { formatMilliseconds } from "../../values/format.js";
import { childFundingOf, childFundingSummary } from "../executions/child-funding.js";
import { holdSummary } from "../executions/guidance.js";
import { pauseSummary } from "../executions/resource.js";
import { CONSOLE_PATHS } from "./console-auth.js";
import { consoleTime } from "./console-time.js";
import { type Html, html } from "./html.js";

/** Small pieces the console's pages share. */

export function executionHref(id: string): string {
  return `${CONSOLE_PATHS.home}/executions/${id}`;
}

export function statusBadge(status: string): Html {
  return html`<span class="status ${status}">${status}</span>`;
}

/** What a waiting or suspended execution waits for and until when (in `zone`), in one line. */
export function describeWaits(
  record: Pick<ExecutionRecord, "status" | "waitingFor" | "hold">,
  zone: string,
): string {
  if (record.status !== "waiting" && record.status !== "suspended") return "";
  return (record.waitingFor ?? []).map((w) => describeWait(w, record.hold, zone)).join("; ");
}

/** A held run's `fix` wait reads in words (its name is the hold's code, which follows in brackets). */
export function describeWait(wait: WaitDescriptor, hold: ExecutionRecord["hold"], zone: string): string {
  const until = wait.until ? ` until ${consoleTime(wait.until, zone)}` : "";
  if (wait.kind === "fix" && hold) return `held for ${holdSummary(hold)} (${wait.name})${until}`;
  if (wait.kind === "pause") return pauseSummary(wait.details ?? {});
  const funding = childFundingOf(wait);
  if (funding) return `child ${wait.name} waiting for ${childFundingSummary(funding)}${until}`;
  return `${wait.kind} ${wait.name}${until}`;
}

/** A duration for people; empty when unknown. */
export function duration(ms: number | null): string {
  return ms === null ? "" : formatMilliseconds(ms);
}

import { setTimeout as sleep } from "node:timers/promises";
import { SupervisorError } from "./supervisor-errors.js";

/** What {@link waitForReady} polls and for how long. */
export interface ReadinessPoll {
  /** Readiness URL per label, e.g. `api → http://127.0.0.1:3000/readyz`. */
  readonly targets: ReadonlyMap<string, string>;
  /** Total time allowed for every target to answer 200, in milliseconds. */
  readonly timeoutMs: number;
  /** Pause between rounds of probes, in milliseconds. */
  readonly intervalMs: number;
  /** Aborted when the supervisor stops, so polling never outlives the processes it watches. */
  readonly signal: AbortSignal;
}

/** `ready` when every target answered 200; `aborted` when the signal fired first. */
export type ReadinessResult = "ready" | "aborted";

/**
 * The longest a single probe may hang, in milliseconds. A role that accepts the connection but
 * never answers must not eat the whole timeout in one request.
 */
const PROBE_TIMEOUT_MS = 2_000;

/** One probe's outcome; `timedOut` probes only say "no answer", so they never hide a real one. */
type ProbeOutcome = { kind: "ready" } | { kind: "answer" | "timedOut"; text: string };

/**
 * Polls every target until each has answered HTTP 200 once. A target that has answered is not
 * probed again: readiness here means "came up", and later failures show up as the role's exit.
 *
 * @throws SupervisorError `SUPERVISOR_READY_TIMEOUT` naming each role still not ready and the last
 *   status or connection error it gave, when `timeoutMs` passes first.
 */
export async function waitForReady(poll: ReadinessPoll): Promise<ReadinessResult> {
  const deadline = Date.now() + poll.timeoutMs;
  const pending = new Map<string, string>([...poll.targets.keys()].map((label) => [label, "no answer yet"]));
  const timedOut = () => Date.now() >= deadline;
  while (!poll.signal.aborted) {
    const probeTimeout = Math.max(1, Math.min(PROBE_TIMEOUT_MS, deadline - Date.now()));
    await Promise.all(
      [...pending.keys()].map(async (label) => {
        const outcome = await probe(poll.targets.get(label)!, probeTimeout, poll.signal);
        if (outcome.kind === "ready") pending.delete(label);
        // A probe cut short by the deadline says less than the status the role gave before it.
        else if (outcome.kind === "answer" || pending.get(label) === "no answer yet")
          pending.set(label, outcome.text);
      }),
    );
    if (poll.signal.aborted) return "aborted";
    if (pending.size === 0) return "ready";
    if (timedOut()) throw SupervisorError.readyTimeout(poll.timeoutMs, pending);
    try {
      await sleep(Math.min(poll.intervalMs, deadline - Date.now()), undefined, { signal: poll.signal });
    } catch {
      return "aborted";
    }
    // No last round squeezed into nothing: it could only time out and report less.
    if (timedOut()) throw SupervisorError.readyTimeout(poll.timeoutMs, pending);
  }
  return "aborted";
}

/** One GET; `ready` on 200, otherwise a short description for the timeout message. */
async function probe(url: string, timeoutMs: number, stop: AbortSignal): Promise<ProbeOutcome> {
  try {
    const response = await fetch(url, { signal: AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]) });
    // Drain the body so the connection is released rather than left for the garbage collector.
    await response.arrayBuffer();
    return response.status === 200 ? { kind: "ready" } : { kind: "answer", text: `HTTP ${response.status}` };
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError") {
      return { kind: "timedOut", text: `no answer within ${timeoutMs} ms` };
    }
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string") {
      return { kind: "answer", text: cause.code };
    }
    return { kind: "answer", text: cause instanceof Error ? cause.message : String(cause) };
  }
}

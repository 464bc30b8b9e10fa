import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";

/**
 * Wakes the execution again for a request that replays one already committed (a signal's
 * Idempotency-Key, a vote already cast). The original request may have died between its commit
 * and its wake; a client retrying it is exactly the moment to repair that, without waiting for
 * the sweep (docs/engine.md, "Wake-ups without loss"). It wakes only when PostgreSQL says the
 * execution waits for something that is now there: a replayed vote below the quorum, or a
 * signal already consumed, costs one read and no turn. Keyed executions not yet admitted and
 * suspended ones are never woken (the probe only answers for waiting, admitted executions).
 */
export async function wakeAgain(deps: ApiDeps, record: ExecutionRecord): Promise<void> {
  if (record.status !== "waiting") return;
  if (!(await deps.waitProbe.satisfiable(record.id))) return;
  await deps.transport.wake(record.id, record.workflow);
}

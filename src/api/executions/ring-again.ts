import type { ExecutionRecord } from "../../store/pg-execution-reads.js";
import type { ApiDeps } from "../api-deps.js";

/**
 * Rings the doorbell again for a request that replays one already committed (a signal's
 * Idempotency-Key, a vote already cast). The original request may have died between its commit
 * and its ring; a client retrying it is exactly the moment to repair that, without waiting for
 * the sweep (docs/engine.md, "Wake-ups without loss"). It rings only when PostgreSQL says the
 * execution waits for something that is now there: a replayed vote below the quorum, or a
 * signal already consumed, costs one read and no turn. Keyed executions not yet admitted and
 * suspended ones are never rung (the probe only answers for waiting, admitted executions).
 */
export async function ringAgain(deps: ApiDeps, record: ExecutionRecord): Promise<void> {
  if (record.status !== "waiting") return;
  if (!(await deps.waitProbe.satisfiable(record.id))) return;
  await deps.transport.wake(record.id, record.workflow);
}

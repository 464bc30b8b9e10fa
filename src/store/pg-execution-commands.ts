import type { Pool } from "pg";
import { type CancelRequest, requestCancellation } from "./pg-cancellation.js";
import { type KeyPause, requestPause, requestUnpause } from "./pg-pause.js";
import { type ResetRequest, requestReset } from "./pg-reset.js";
import { requestResume } from "./pg-resume.js";

/**
 * The marks an operator's command leaves on an organisation's executions (resume now, cancel,
 * pause, unpause and reset),
 * over one pool (the api's). Only the marks: the caller rings each execution's doorbell.
 */
export class PgExecutionCommands {
  constructor(private readonly pool: Pool) {}

  /** See {@link requestResume}. */
  resume(orgId: string, executionId: string) {
    return requestResume(this.pool, orgId, executionId);
  }

  /** See {@link requestCancellation}. */
  cancel(orgId: string, executionId: string, request: CancelRequest = {}) {
    return requestCancellation(this.pool, orgId, executionId, request);
  }

  /** See {@link requestPause}. */
  pause(orgId: string, executionId: string, pause: KeyPause) {
    return requestPause(this.pool, orgId, executionId, pause);
  }

  /** See {@link requestUnpause}. */
  unpause(orgId: string, executionId: string) {
    return requestUnpause(this.pool, orgId, executionId);
  }

  /** See {@link requestReset}. */
  reset(request: ResetRequest) {
    return requestReset(this.pool, request);
  }
}

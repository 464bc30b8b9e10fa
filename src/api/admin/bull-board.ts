import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import { type RequestHandler, Router } from "express";
import helmet from "helmet";
import type { PgApiKeys } from "../../store/pg-api-keys.js";
import { authenticate, principalOf, requirePermission } from "../auth/authenticate.js";
import { roleMay } from "../auth/permissions.js";

/** Where Bull Board is served. */
export const BULL_BOARD_PATH = "/admin/queues";

/** Keys whose values Bull Board never shows, at any depth of job data or return values. */
const SECRET_KEY =
  /secret|passw|token|api[-_]?key|private|mnemonic|seed|authori[sz]ation|signature|credential/i;

/** Job data with every secret-looking field replaced by "[redacted]". */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 20) return "[redacted: too deep]";
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        SECRET_KEY.test(k) ? "[redacted]" : redactSecrets(v, depth + 1),
      ]),
    );
  }
  return value;
}

function board(queues: readonly Queue[], readOnlyMode: boolean): RequestHandler {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => {
      const adapter = new BullMQAdapter(queue, { readOnlyMode, allowRetries: !readOnlyMode });
      adapter.setFormatter("data", (data) => redactSecrets(data));
      adapter.setFormatter("returnValue", (data) => redactSecrets(data));
      return adapter;
    }),
    serverAdapter,
  });
  return serverAdapter.getRouter() as RequestHandler;
}

/**
 * Bull Board at /admin/queues (DESIGN §6): authenticated like every route; admins get the full
 * board, operators a read-only one, other roles 403. Job data is redacted for secrets (Tenor's own
 * jobs carry only an execution id; PostgreSQL holds the rest).
 */
export function bullBoardRouter(queues: readonly Queue[], keys: PgApiKeys): Router {
  const full = board(queues, false);
  const readOnly = board(queues, true);
  const router = Router();
  router.use(
    BULL_BOARD_PATH,
    // The board's UI needs its own scripts and styles; the API's strict CSP would block them.
    helmet({ contentSecurityPolicy: false }),
    authenticate(keys),
    requirePermission("queuesRead"),
    (req, res, next) => (roleMay(principalOf(res).role, "queuesWrite") ? full : readOnly)(req, res, next),
  );
  return router;
}

import type { RequestHandler } from "express";
import { API_ERRORS } from "../api-error-codes.js";
import { apiError } from "../problem.js";
import { isMutating } from "./board-auth.js";

/**
 * The changes a platform-admin may make on Bull Board (README, "Bull Board"), as paths under the
 * board. Bull Board offers more (add a job, edit its data, change delays and priorities, empty or
 * obliterate a queue, concurrency and rate limits, job schedulers); none of them is a Tenor
 * operation, and adding or editing a job would act on an organisation's execution, which platform
 * keys may not. Anything mutating that is not listed is refused before Bull Board sees it.
 */
export const BOARD_ACTIONS = [
  { action: "pause all", method: "PUT", path: /^\/api\/queues\/pause$/ },
  { action: "resume all", method: "PUT", path: /^\/api\/queues\/resume$/ },
  { action: "pause", method: "PUT", path: /^\/api\/queues\/[^/]+\/pause$/ },
  { action: "resume", method: "PUT", path: /^\/api\/queues\/[^/]+\/resume$/ },
  { action: "retry all", method: "PUT", path: /^\/api\/queues\/[^/]+\/retry\/(failed|completed)$/ },
  { action: "clean", method: "PUT", path: /^\/api\/queues\/[^/]+\/clean\/(completed|failed)$/ },
  { action: "retry", method: "PUT", path: /^\/api\/queues\/[^/]+\/[^/]+\/retry$/ },
  { action: "remove", method: "PUT", path: /^\/api\/queues\/[^/]+\/[^/]+\/clean$/ },
] as const;

/** True when `method path` (relative to the board) is one of {@link BOARD_ACTIONS}. */
export function isBoardAction(method: string, path: string): boolean {
  return BOARD_ACTIONS.some((a) => a.method === method && a.path.test(path));
}

/** Refuses with 403 `QUEUES_ACTION_NOT_ALLOWED` every mutating board request that is not a board action. */
export function boardActionGate(): RequestHandler {
  return (req, _res, next) => {
    if (isMutating(req) && !isBoardAction(req.method, req.path)) {
      next(
        apiError(
          API_ERRORS.QUEUES_ACTION_NOT_ALLOWED,
          `${req.method} ${req.path} is not a board action; allowed: ${BOARD_ACTIONS.map((a) => a.action).join(", ")}`,
          { method: req.method },
        ),
      );
      return;
    }
    next();
  };
}

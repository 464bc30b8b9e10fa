import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import { Queue } from "bullmq";
import { type RequestHandler, Router } from "express";
import helmet from "helmet";
import type { Redis } from "ioredis";
import { redactText } from "../../errors/redact.js";
import type { Logger } from "../../observability/logger.js";
import type { PgApiKeys } from "../../store/pg-api-keys.js";
import type { PgAudit } from "../../store/pg-audit.js";
import { activityQueueName, QUEUE_NAMES } from "../../transport/queue-names.js";
import { audited } from "../audit/audit-trail.js";
import { anyPrincipalOf, requirePermission } from "../auth/authenticate.js";
import { roleMay } from "../auth/permissions.js";
import { BULL_BOARD_PATH, SIGN_OUT_PATH } from "./admin-paths.js";
import { boardActionGate } from "./board-actions.js";
import { boardAuthentication, isMutating, readOnlyGate } from "./board-auth.js";
import type { BoardSessions } from "./board-session.js";

export { BULL_BOARD_PATH } from "./admin-paths.js";

/** Keys whose values Bull Board never shows, at any depth of job data or return values. */
const SECRET_KEY =
  /secret|passw|token|api[-_]?key|private|mnemonic|seed|authori[sz]ation|signature|credential/i;

/** Job data with every secret-looking field replaced by "[redacted]", and secrets inside strings too (src/errors/redact.ts). */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 20) return "[redacted: too deep]";
  if (typeof value === "string") return redactText(value);
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

/** A queue's name is shown on the board when it is one of Tenor's (src/transport/queue-names.ts). */
export function isBoardQueue(name: string): boolean {
  return (
    name === QUEUE_NAMES.executions ||
    name === QUEUE_NAMES.schedules ||
    name.startsWith(activityQueueName(""))
  );
}

/** How long a discovered queue list is reused before Redis is scanned again, in milliseconds. */
const DISCOVERY_INTERVAL_MS = 5_000;

/**
 * Every Tenor queue that exists under the prefix: executions, schedules and each `activity-*`
 * queue, found from BullMQ's `<prefix>:<queue>:meta` keys (activity queues are declared by the
 * runners' workflows, which the api does not load).
 */
export async function discoverQueueNames(redis: Redis, prefix: string): Promise<string[]> {
  const names = new Set<string>([QUEUE_NAMES.executions, QUEUE_NAMES.schedules]);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*:meta`, "COUNT", 500);
    cursor = next;
    for (const key of keys) {
      const name = key.slice(prefix.length + 1, -":meta".length);
      if (isBoardQueue(name)) names.add(name);
    }
  } while (cursor !== "0");
  return [...names].sort();
}

interface Board {
  handler: RequestHandler;
  add(queue: Queue): void;
}

function board(readOnlyMode: boolean): Board {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  const { addQueue } = createBullBoard({
    queues: [],
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: readOnlyMode ? "Tenor (read-only)" : "Tenor",
        miscLinks: [{ text: "Sign out", url: SIGN_OUT_PATH }],
      },
    },
  });
  return {
    handler: serverAdapter.getRouter() as RequestHandler,
    add: (queue) => {
      const adapter = new BullMQAdapter(queue, { readOnlyMode, allowRetries: !readOnlyMode });
      adapter.setFormatter("data", (data) => redactSecrets(data));
      adapter.setFormatter("returnValue", (data) => redactSecrets(data));
      addQueue(adapter);
    },
  };
}

export interface BullBoardOptions {
  keys: PgApiKeys;
  audit: PgAudit;
  logger: Logger;
  sessions: BoardSessions;
  redis: Redis;
  prefix: string;
}

/**
 * Bull Board at /admin/queues (README, "Bull Board"), for platform keys only: a bearer key or a
 * sign-in session. platform-admin gets the full board, platform-operator a read-only one whose
 * mutating requests are refused with 403 before they reach Bull Board; organisation keys of any
 * role get 403. Every Tenor queue is on it. Job data is redacted for secrets (Tenor's own jobs
 * carry only an execution id; PostgreSQL holds the rest). `close` releases the queues.
 */
export function bullBoardRouter(options: BullBoardOptions): { router: Router; close(): Promise<void> } {
  const full = board(false);
  const readOnly = board(true);
  const queues = new Map<string, Queue>();
  let discovered = 0;
  let discovering: Promise<void> | null = null;
  const refresh = async () => {
    for (const name of await discoverQueueNames(options.redis, options.prefix)) {
      if (queues.has(name)) continue;
      const queue = new Queue(name, { connection: options.redis, prefix: options.prefix });
      queues.set(name, queue);
      full.add(queue);
      readOnly.add(queue);
    }
    discovered = Date.now();
  };
  const router = Router();
  router.use(
    BULL_BOARD_PATH,
    // The board's UI needs its own scripts and styles; the API's strict CSP would block them.
    helmet({ contentSecurityPolicy: false }),
    // Every change attempted on the shared queues is audited, refused ones included.
    (req, res, next) =>
      isMutating(req)
        ? audited(options, "queue.change", (r) => `${r.method} ${r.originalUrl}`)(req, res, next)
        : next(),
    boardAuthentication(options.keys, options.sessions),
    requirePermission("queuesRead"),
    readOnlyGate(),
    boardActionGate(),
    async (_req, _res, next) => {
      try {
        if (Date.now() - discovered > DISCOVERY_INTERVAL_MS) {
          discovering ??= refresh().finally(() => {
            discovering = null;
          });
          await discovering;
        }
        next();
      } catch (error) {
        next(error);
      }
    },
    (req, res, next) =>
      (roleMay(anyPrincipalOf(res).role, "queuesWrite") ? full : readOnly).handler(req, res, next),
  );
  return {
    router,
    close: async () => {
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
    },
  };
}

import type { Request, Response } from "express";
import { z } from "zod";
import { NODE_WAIT_REASONS } from "../../ledger-index/ledger-reads.js";
import type { ApiDeps } from "../api-deps.js";
import { anyPrincipalOf } from "../auth/authenticate.js";
import { toWait } from "../executions/resource.js";
import { ExecutionStatusSchema, WaitSchema } from "../executions/schemas.js";
import { rolesNote } from "../openapi/common.js";
import { defineRoute, type RouteDeclaration } from "../route.js";
import { ReplicasStatusSchema, readReplicasStatus } from "./replicas-status.js";
import { ScheduleViewSchema, scheduleJson } from "./schedule-routes.js";

/** Most executions listed under `noMutation.executions`. */
const STALE_LIST_LIMIT = 50;

const CountsSchema = z.partialRecord(ExecutionStatusSchema, z.number().int());

const LedgerChainSchema = z.object({
  chainId: z.number().int(),
  headHeight: z.string(),
  indexedHeight: z.string(),
  lagBlocks: z.number().int(),
  lagSeconds: z.number(),
  lastReorgDepth: z.number().int(),
  lastReorgAt: z.string().nullable(),
  openRanges: z.number().int(),
  waiting: z
    .object({
      reason: z.enum(NODE_WAIT_REASONS),
      detail: z.string(),
      since: z.string(),
    })
    .nullable()
    .meta({
      description:
        "Set while the live tail waits for a node that is syncing or behind instead of ingesting or rolling " +
        "back: the reason, the node's answer in words, and since when. Null while it does not wait.",
    }),
  updatedAt: z.string(),
});

export const PlatformStatusSchema = z
  .object({
    generatedAt: z.string(),
    thresholds: z.object({ noMutationSeconds: z.number().int() }),
    totals: CountsSchema,
    workflows: z.array(
      z.object({
        workflow: z.string(),
        counts: CountsSchema,
        oldestPending: z
          .object({ id: z.uuid(), status: ExecutionStatusSchema, createdAt: z.string() })
          .nullable()
          .meta({ description: "The oldest execution not yet completed or failed." }),
        noMutation: z.number().int(),
      }),
    ),
    noMutation: z.object({
      count: z.number().int(),
      executions: z.array(
        z.object({
          id: z.uuid(),
          workflow: z.string(),
          status: ExecutionStatusSchema,
          updatedAt: z.string(),
          waitingFor: z.array(WaitSchema).nullable(),
        }),
      ),
    }),
    chains: z.array(LedgerChainSchema).meta({
      description:
        "The Ledger Index per chain (platform-wide): head and fully indexed height, lag in blocks and in " +
        "seconds of block time, the last reorganisation's depth, and open catch-up ranges.",
    }),
    schedules: z.array(ScheduleViewSchema).meta({
      description:
        "Every runner schedule (platform-wide, not per organisation) with its state: `ok` (its last run " +
        "succeeded; `lastOutcome: empty` means it ran and found nothing), `running`, `failing`, `pending`, " +
        "`overdue` (late by more than one cadence), `stopped` (nothing attempted for four cadences) or " +
        "`paused` (an operator paused it), its cadence in words and its next run.",
    }),
    replicas: ReplicasStatusSchema,
  })
  .meta({ id: "PlatformStatus" });

/** `GET /v1/platform/status`: workflow health of the caller's organisation (a platform key: of all, counts only), from the projections. */
function readStatus(deps: ApiDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    const threshold = deps.settings.noMutationThresholdSeconds;
    // A platform key sees counts across organisations, never an organisation's execution ids.
    const { orgId } = anyPrincipalOf(res);
    const status = await deps.platformStatus.read(orgId, threshold, orgId === null ? 0 : STALE_LIST_LIMIT);
    const stale = status.stale;
    const workflows =
      orgId === null ? status.workflows.map((w) => ({ ...w, oldestPending: null })) : status.workflows;
    const totals: Record<string, number> = {};
    for (const w of workflows)
      for (const [status, n] of Object.entries(w.counts)) totals[status] = (totals[status] ?? 0) + n;
    const body: z.infer<typeof PlatformStatusSchema> = {
      generatedAt: new Date().toISOString(),
      thresholds: { noMutationSeconds: threshold },
      totals,
      workflows,
      noMutation: {
        count: workflows.reduce((sum, w) => sum + w.noMutation, 0),
        executions: stale.map((e) => ({ ...e, waitingFor: e.waitingFor?.map(toWait) ?? null })),
      },
      chains: await deps.ledgerReads.health(),
      schedules: (await deps.schedules.list()).map(scheduleJson),
      replicas: await readReplicasStatus(deps.replicas, deps.shardCount, deps.chainIds.length > 0),
    };
    res.json(body);
  };
}

/** `GET /v1/platform/status`, the platform module's one route. */
export const PLATFORM_ROUTES: readonly RouteDeclaration[] = [
  defineRoute({
    method: "get",
    path: "/v1/platform/status",
    permission: "platformStatus",
    openapi: {
      operationId: "platformStatus",
      tags: ["platform"],
      summary: "Workflow health of the organisation",
      description:
        "Derived from the status projections: counts per workflow and status, the oldest unfinished execution, " +
        "and unfinished executions whose projection has not changed for `api.noMutationThresholdSeconds` " +
        "(default 3600; at most 50 listed), the Ledger Index per chain, and the state of every runner schedule " +
        "(overdue and stopped ones included), " +
        "and every live runner and indexer with the shards no one owns. " +
        rolesNote("platformStatus"),
      responses: {
        200: {
          description: "Platform status.",
          content: { "application/json": { schema: PlatformStatusSchema } },
        },
      },
    },
    handler: readStatus,
  }),
];

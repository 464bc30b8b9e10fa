import type { Pool } from "pg";
import { z } from "zod";
import type { ApprovalWaitDetails } from "../engine/approvals.js";
import type { ExecutionClient, ExecutionView, JournalView } from "../engine/execution-client.js";
import type { ExecutionStatus, WaitKind } from "../engine/execution-store.js";
import { type RecordedHistory, recordHistory } from "../engine/recorded-history.js";
import type { AnyWorkflow } from "../engine/workflow.js";
import { TenorError } from "../errors/tenor-error.js";
import type { PgApprovals } from "../store/pg-approvals.js";
import { requestCancellation } from "../store/pg-cancellation.js";
import type { PgExecutionReads } from "../store/pg-execution-reads.js";
import type { TestPeople } from "./test-people.js";

/** What a run handle needs from its kit. */
export interface TestRunDeps {
  client: ExecutionClient;
  pool: Pool;
  reads: PgExecutionReads;
  approvals: PgApprovals;
  people: TestPeople;
  wake(executionId: string, workflow: string): Promise<void>;
  workflow?: AnyWorkflow;
}

/** Default bound of the `waitFor*` helpers, in ms (real time: a test never waits on virtual time). */
const DEFAULT_WAIT_MS = 20_000;
/** Re-read interval of the projection while waiting for a state, in ms. */
const POLL_MS = 20;

const TERMINAL: readonly ExecutionStatus[] = ["completed", "failed"];

/** Code of a vote the approvals store refused (its reason in `details.refusal`: self-approval, duplicate, ...). */
export const VOTE_REFUSED = "TEST_VOTE_REFUSED";

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    testing: typeof VOTE_REFUSED;
  }
}

/**
 * One execution under test: drive it (signal, approve or reject as a named subject, cancel) and
 * assert on what PostgreSQL holds (status, what it waits for, output, journal, recorded history).
 * Every wait polls the status projection until the state holds, bounded in real time.
 */
export class TestRun<O = unknown> {
  constructor(
    readonly id: string,
    readonly orgId: string,
    private readonly deps: TestRunDeps,
  ) {}

  /** The status projection now. */
  view(): Promise<ExecutionView> {
    return this.deps.client.view(this.id, this.orgId);
  }

  /** Waits until `predicate` holds for the projection; throws with the last view after `timeoutMs`. */
  async waitUntil(
    predicate: (view: ExecutionView) => boolean,
    what: string,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<ExecutionView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const view = await this.view();
      if (predicate(view)) return view;
      if (TERMINAL.includes(view.status)) {
        throw new Error(`execution ${this.id} ended ${view.status} before ${what}: ${JSON.stringify(view)}`);
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `execution ${this.id} did not reach ${what} in ${timeoutMs} ms: ${JSON.stringify(view)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Waits until the run waits on `kind` (named `name`, when given): a timer, signal, approval, ... */
  waitForWait(kind: WaitKind, name?: string, timeoutMs?: number): Promise<ExecutionView> {
    return this.waitUntil(
      (view) =>
        view.status === "waiting" &&
        (view.waitingFor ?? []).some((w) => w.kind === kind && (name === undefined || w.name === name)),
      `a ${kind} wait${name ? ` "${name}"` : ""}`,
      timeoutMs,
    );
  }

  /** Waits until the run completed or failed and returns that view. */
  async finished(timeoutMs = DEFAULT_WAIT_MS): Promise<ExecutionView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const view = await this.view();
      if (TERMINAL.includes(view.status)) return view;
      if (Date.now() >= deadline) {
        throw new Error(`execution ${this.id} did not finish in ${timeoutMs} ms: ${JSON.stringify(view)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Waits for completion and returns the output decoded through the workflow's output schema. */
  async output(timeoutMs?: number): Promise<O> {
    const view = await this.finished(timeoutMs);
    if (view.status !== "completed") {
      throw new Error(`execution ${this.id} failed: ${JSON.stringify(view.failure)}`);
    }
    const schema = this.deps.workflow?.output as z.ZodType<O, unknown> | undefined;
    return schema ? z.decode(schema, view.output as never) : (view.output as O);
  }

  /** Delivers signal `name` with `payload` (kept until a wait consumes it) and wakes the run. */
  async signal(name: string, payload: unknown): Promise<void> {
    await this.deps.client.signal(this.id, name, payload, { orgId: this.orgId });
  }

  /** Approves `approval` as `as` (a subject with an approver key), on the parameters the run shows now. */
  approve(approval: string, vote: { as: string; reason?: string }): Promise<void> {
    return this.vote(approval, "approve", vote);
  }

  /** Rejects `approval` as `as`. */
  reject(approval: string, vote: { as: string; reason?: string }): Promise<void> {
    return this.vote(approval, "reject", vote);
  }

  /** Requests cooperative cancellation (the run and its unfinished children) and wakes each. */
  async cancel(): Promise<void> {
    const result = await requestCancellation(this.deps.pool, this.orgId, this.id);
    if (!result?.marked)
      throw new Error(`execution ${this.id} cannot be cancelled: ${result?.status ?? "missing"}`);
    for (const execution of result.executions) await this.deps.wake(execution.id, execution.workflow);
  }

  /** The journal: every position with its recorded result (virtual times for timers and `now`). */
  journal(): Promise<JournalView[]> {
    return this.deps.client.journal(this.id, this.orgId);
  }

  /** The recorded history, as `GET /v1/executions/{id}/history` exports it. */
  async history(): Promise<RecordedHistory> {
    const [view, stored, journal] = await Promise.all([
      this.view(),
      this.deps.reads.input(this.orgId, this.id),
      this.journal(),
    ]);
    return recordHistory({ ...view, input: stored?.input, journal }, new Date());
  }

  /**
   * One vote, as the Platform API casts it (src/api/approvals): bound to the hash of the
   * parameters the approval shows, refused for the run's own starter or a second vote of a subject.
   */
  private async vote(
    approval: string,
    decision: "approve" | "reject",
    vote: { as: string; reason?: string },
  ) {
    const view = await this.waitForWait("approval", approval);
    const wait = (view.waitingFor ?? []).find((w) => w.kind === "approval" && w.name === approval);
    const details = wait?.details as unknown as ApprovalWaitDetails;
    const person = await this.deps.people.key(this.orgId, vote.as, "approver");
    const outcome = await this.deps.approvals.vote({
      orgId: this.orgId,
      executionId: this.id,
      name: approval,
      approver: { keyId: person.keyId, name: vote.as, role: person.role, subject: vote.as },
      decision,
      paramsHash: details.paramsHash,
      reason: vote.reason ?? null,
    });
    if (outcome.kind !== "recorded") {
      throw new TenorError(VOTE_REFUSED, `${vote.as}'s vote on ${approval} was refused: ${outcome.kind}`, {
        details: { executionId: this.id, approval, refusal: outcome.kind },
      });
    }
    if (outcome.decision) await this.deps.wake(this.id, outcome.workflow);
  }
}

import { randomUUID } from "node:crypto";
import { z } from "zod";
import { TenorError } from "../errors/tenor-error.js";
import { describePath, escapeText, findUnstorable } from "../values/storable.js";
import { canonicalHash } from "./canonical-json.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import { assertStorable, type FailureRecord } from "./errors.js";
import type { ExecutionStatus, ExecutionStore, JournalEntry, WaitDescriptor } from "./execution-store.js";
import { inputIssues } from "./input-issues.js";
import type { WorkflowRegistry } from "./registry.js";

/** The status projection of one execution, as the API and the CLI show it. */
export interface ExecutionView {
  id: string;
  workflow: string;
  workflowVersion: number;
  orgId: string;
  status: ExecutionStatus;
  waitingFor: WaitDescriptor[] | null;
  wakeAt: string | null;
  progress: Record<string, unknown> | null;
  output: unknown;
  failure: FailureRecord | null;
  hold: FailureRecord | null;
  recoveryAttempts: number;
  parentId: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

/** The API key that delivered a signal, as it was at that moment (no secret). */
export interface SignalSender {
  keyId: string;
  name: string;
  subject: string;
  role: string;
}

export interface JournalView extends JournalEntry {
  startedAt: string;
  completedAt: string | null;
}

/** Read model and signal intake; implemented in src/store. */
export interface ExecutionQueries {
  view(executionId: string): Promise<ExecutionView | null>;
  journal(executionId: string): Promise<JournalView[]>;
  /** Stores a signal with who sent it (null: not known); false when this idempotency key was already delivered. */
  insertSignal(
    executionId: string,
    name: string,
    payload: unknown,
    idempotencyKey: string | null,
    sentBy?: SignalSender | null,
  ): Promise<boolean>;
  /**
   * Stores many signals in one statement; each is kept only while its execution is not terminal,
   * and only once per idempotency key. Returns the ids of the executions whose signal was stored
   * now (not a repeat of a key, not refused for a terminal execution).
   */
  insertSignals(signals: readonly SignalDelivery[]): Promise<Set<string>>;
  /** The views of the executions that exist among `executionIds`. */
  views(executionIds: readonly string[]): Promise<ExecutionView[]>;
}

/** One signal of a batch ({@link ExecutionClient.signalMany}): at most one per execution. */
export interface SignalDelivery {
  executionId: string;
  name: string;
  payload: unknown;
  /** Required in a batch: a repeated batch (the next tick, another replica) must not store twice. */
  idempotencyKey: string;
}

/** What became of one signal of a batch. */
export type SignalDeliveryOutcome = "delivered" | "repeated" | "terminal" | "missing";

/**
 * Word that an execution finished, pushed by the runner after the terminal status committed
 * (src/runtime/execution-finished.ts). Best effort: a notification can be lost (the runner died
 * between commit and publish, the subscription was down), so a waiter also re-reads on a slow
 * fallback interval.
 */
export interface FinishedNotifications {
  /**
   * Calls `onFinished` when `executionId` is reported finished, at once when it was reported in
   * the last moments. Resolves once the subscription is live (or could not be made: the fallback
   * then answers), with a function that stops watching and whether every report made since
   * `since` (epoch ms) would have been heard.
   */
  watch(executionId: string, onFinished: () => void, options?: { since?: number }): Promise<FinishedWatch>;
}

/** A registered watch of {@link FinishedNotifications}. */
export interface FinishedWatch {
  stop(): void;
  /**
   * True when the subscription has been live without a break since the `since` passed to
   * `watch`, and the reports received since then are all remembered: had the execution been
   * reported finished since `since`, `onFinished` has been called. False when no `since` was given.
   */
  heardSince: boolean;
}

/**
 * Options of {@link ExecutionClient.waitForTerminal} and {@link ExecutionClient.waitUntilTerminal}.
 */
export interface TerminalWaitOptions {
  /**
   * Epoch ms taken just before the call that created the execution began (`start`), only when
   * that call did create it. Its finish is announced after that moment, so when the subscription
   * has listened throughout since then, the wait skips its first read (the execution has only
   * just started) and reads when the announcement comes, or at the fallback interval should it
   * be lost. Leave it unset for an execution that may have existed before (an idempotent replay).
   */
  startedAt?: number;
}

/** What the client needs from the transport: enqueue a new execution, wake a parked one. */
export interface ExecutionTransport {
  enqueue(executionId: string, workflow: string): Promise<void>;
  wake(executionId: string, workflow?: string): Promise<void>;
}

export interface StartRequest {
  workflow: string;
  input: unknown;
  orgId?: string;
  idempotencyKey?: string;
  /** How long the idempotency key stays bound, in ms; unset binds it for the row's lifetime. */
  idempotencyTtlMs?: number;
  /** The principal (API key id) starting it; recorded so nobody approves their own request. */
  createdBy?: string;
}

export interface StartResult {
  executionId: string;
  /** False when the idempotency key named an existing execution. */
  created: boolean;
}

const TERMINAL: readonly ExecutionStatus[] = ["completed", "failed"];

/**
 * Keyed serialization of workflows (docs/keyed.md, "Keyed workflows"; src/keyed): a keyed execution
 * is admitted into its key's line instead of being enqueued, and runs when its turn comes.
 */
export interface KeyedAdmission {
  admit(request: { executionId: string; workflow: string; key: string; limit: number }): Promise<void>;
}

/**
 * Starts executions, delivers signals and reads status. Used by the API role and the CLI; it never
 * runs workflow code. The execution row is committed before its job is enqueued, so a crash in
 * between leaves work the sweep finds, never a job without a row.
 */
export class ExecutionClient {
  constructor(
    private readonly deps: {
      registry: WorkflowRegistry;
      store: ExecutionStore;
      queries: ExecutionQueries;
      transport: ExecutionTransport;
      /** Required to start workflows that declare `key`; without it such a start is refused. */
      keys?: KeyedAdmission;
      /**
       * Push notifications of finished executions for {@link waitForTerminal}; without them it
       * polls (20 ms doubling to 500 ms).
       */
      finished?: FinishedNotifications;
      /** With `finished`: re-read this often, in ms, in case a notification was lost (default 1000). */
      fallbackPollMs?: number;
    },
  ) {}

  async start(request: StartRequest): Promise<StartResult> {
    const workflow = this.deps.registry.get(request.workflow);
    const parsed = workflow.input.safeParse(request.input);
    if (!parsed.success) {
      throw new TenorError(
        ENGINE_ERRORS.INPUT_INVALID,
        `input of ${workflow.name} is invalid: ${z.prettifyError(parsed.error)}`,
        { details: { workflow: workflow.name, issues: inputIssues(parsed.error) } },
      );
    }
    const input = z.encode(workflow.input, parsed.data);
    const unstorable = findUnstorable(input);
    if (unstorable) {
      const issue = { path: unstorable.path, message: unstorable.reason };
      throw new TenorError(
        ENGINE_ERRORS.INPUT_INVALID,
        `input of ${workflow.name} cannot be stored: ${describePath(unstorable.path)} ${unstorable.reason}`,
        { details: { workflow: workflow.name, issues: [issue] } },
      );
    }
    const key = workflow.key ? workflow.key(parsed.data) : null;
    if (key !== null) assertStorable(`the key of ${workflow.name}`, key);
    if (key !== null && !this.deps.keys) {
      throw new TenorError(
        ENGINE_ERRORS.KEYED_ADMISSION_MISSING,
        `workflow ${workflow.name} declares a key but this client has no keyed admission wired in`,
        { details: { workflow: workflow.name } },
      );
    }
    const orgId = request.orgId ?? "default";
    const requestHash = hashRequest(workflow.name, input);
    const { summary, created } = await this.deps.store.createExecution({
      id: randomUUID(),
      workflow: workflow.name,
      workflowVersion: workflow.version,
      orgId,
      input,
      key,
      // A keyed execution waits for its key until the gate admits it (docs/keyed.md).
      waitingFor: key === null ? null : [{ kind: "key", name: key }],
      idempotencyKey: request.idempotencyKey ?? null,
      requestHash,
      parentId: null,
      parentPosition: null,
      createdBy: request.createdBy ?? null,
      idempotencyExpiresAt:
        request.idempotencyKey !== undefined && request.idempotencyTtlMs !== undefined
          ? new Date(Date.now() + request.idempotencyTtlMs)
          : null,
    });
    if (!created && summary.requestHash !== requestHash) {
      throw new TenorError(
        ENGINE_ERRORS.IDEMPOTENCY_KEY_REUSED,
        `idempotency key ${JSON.stringify(request.idempotencyKey)} was used for a different request (execution ${summary.id})`,
        { details: { idempotencyKey: request.idempotencyKey, executionId: summary.id } },
      );
    }
    if (!TERMINAL.includes(summary.status)) {
      if (key !== null && this.deps.keys) {
        const limit = workflow.keyLimit ?? 1;
        await this.deps.keys.admit({ executionId: summary.id, workflow: workflow.name, key, limit });
      } else {
        await this.deps.transport.enqueue(summary.id, workflow.name);
      }
    }
    return { executionId: summary.id, created };
  }

  /** Delivers a signal; it is kept until a wait consumes it, and wakes the execution now. */
  async signal(
    executionId: string,
    name: string,
    payload: unknown,
    options: { orgId?: string; idempotencyKey?: string; sentBy?: SignalSender } = {},
  ) {
    const view = await this.requireView(executionId, options.orgId);
    if (TERMINAL.includes(view.status)) {
      throw new TenorError(
        ENGINE_ERRORS.EXECUTION_TERMINAL,
        `execution ${executionId} is ${view.status}; it takes no signals`,
        {
          details: { executionId, status: view.status },
        },
      );
    }
    assertStorable(`signal "${escapeText(name)}"`, { name, payload });
    const stored = await this.deps.queries.insertSignal(
      executionId,
      name,
      payload,
      options.idempotencyKey ?? null,
      options.sentBy ?? null,
    );
    // A suspended execution resumes on its recovery schedule and consumes the signal then; waking
    // it now would spend a recovery attempt ahead of the backoff (a burst of signals would exhaust
    // recovery in milliseconds). Read after the insert, so any turn that begins later sees it.
    const after = await this.deps.queries.view(executionId);
    // A keyed execution still in its key's line must not be started by a wake: its first turn
    // (when the keyed gate admits it) finds the signal kept.
    if (after?.status !== "suspended" && !waitsForKey(after))
      await this.deps.transport.wake(executionId, view.workflow);
    return { delivered: stored };
  }

  /**
   * Delivers many signals (at most one per execution) in two statements, for a machine sender
   * that settles many waits at once (the confirmation watcher: docs/chains.md). Unlike
   * {@link signal} it refuses nothing with an error: each delivery's outcome says whether it was
   * stored now, was a repeat of its idempotency key, or found its execution terminal or missing.
   * A repeat wakes again, as a replayed signal() does: the delivery that stored it may have
   * committed and died before its wake (docs/engine.md, "Wake-ups without loss").
   */
  async signalMany(deliveries: readonly SignalDelivery[]): Promise<Map<string, SignalDeliveryOutcome>> {
    const outcomes = new Map<string, SignalDeliveryOutcome>();
    const valid = deliveries.filter((d) => {
      if (z.uuid().safeParse(d.executionId).success) return true;
      outcomes.set(d.executionId, "missing");
      return false;
    });
    if (valid.length === 0) return outcomes;
    for (const d of valid)
      assertStorable(`signal "${escapeText(d.name)}"`, { name: d.name, payload: d.payload });
    const stored = await this.deps.queries.insertSignals(valid);
    // Read after the insert, as signal() does: a turn that begins later sees the signal.
    const after = new Map(
      (await this.deps.queries.views(valid.map((d) => d.executionId))).map((v) => [v.id, v]),
    );
    const woken: Promise<void>[] = [];
    for (const d of valid) {
      const view = after.get(d.executionId);
      if (!view) outcomes.set(d.executionId, "missing");
      else if (TERMINAL.includes(view.status))
        outcomes.set(d.executionId, stored.has(d.executionId) ? "delivered" : "terminal");
      else {
        outcomes.set(d.executionId, stored.has(d.executionId) ? "delivered" : "repeated");
        // As in signal(): a suspended run consumes it on its recovery schedule, a keyed run in
        // its key's line when the gate admits it.
        if (view.status !== "suspended" && !waitsForKey(view))
          woken.push(this.deps.transport.wake(view.id, view.workflow));
      }
    }
    await Promise.all(woken);
    return outcomes;
  }

  async view(executionId: string, orgId?: string): Promise<ExecutionView> {
    return this.requireView(executionId, orgId);
  }

  async journal(executionId: string, orgId?: string): Promise<JournalView[]> {
    await this.requireView(executionId, orgId);
    return this.deps.queries.journal(executionId);
  }

  /**
   * Waits until the execution is terminal or `timeoutMs` passes; returns the last view. With
   * push notifications it re-reads when told the execution finished, and every `fallbackPollMs`
   * in case the notification was lost; without them it polls.
   */
  async waitForTerminal(
    executionId: string,
    timeoutMs: number,
    orgId?: string,
    options: TerminalWaitOptions = {},
  ): Promise<ExecutionView> {
    return this.waitUntilTerminal(
      executionId,
      timeoutMs,
      () => this.requireView(executionId, orgId),
      options,
    );
  }

  /**
   * waitForTerminal with the caller's own read (the API reads the resource it answers with, so
   * the read that sees the execution finished is the answer's too). `read` must throw for an
   * execution the caller may not see. Whatever it returns comes from a `read`.
   */
  async waitUntilTerminal<T extends { status: ExecutionStatus }>(
    executionId: string,
    timeoutMs: number,
    read: () => Promise<T>,
    options: TerminalWaitOptions = {},
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    const { finished } = this.deps;
    if (!finished) return this.pollForTerminal(deadline, read);
    let wake: (() => void) | undefined;
    let told = false;
    // Watch before the first read: a finish between the read and the watch would go unheard.
    const watch = await finished.watch(
      executionId,
      () => {
        told = true;
        wake?.();
      },
      options.startedAt !== undefined ? { since: options.startedAt } : {},
    );
    // Started after the subscription listened and not announced since: it cannot have finished
    // yet, so the first read would only find it running.
    let skipRead = watch.heardSince && !told;
    try {
      const fallbackMs = this.deps.fallbackPollMs ?? 1_000;
      for (;;) {
        if (!skipRead) {
          const current = await read();
          if (TERMINAL.includes(current.status) || Date.now() >= deadline) return current;
          if (told) {
            // Told before the read could see it (a replica lagging behind would do this): re-read soon.
            told = false;
            continue;
          }
        }
        skipRead = false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(fallbackMs, Math.max(1, deadline - Date.now())));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        told = false;
      }
    } finally {
      watch.stop();
    }
  }

  /** The wait without notifications: polls from 20 ms, doubling to 500 ms. */
  private async pollForTerminal<T extends { status: ExecutionStatus }>(
    deadline: number,
    read: () => Promise<T>,
  ): Promise<T> {
    let pause = 20;
    for (;;) {
      const current = await read();
      if (TERMINAL.includes(current.status) || Date.now() >= deadline) return current;
      await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(1, deadline - Date.now()))));
      pause = Math.min(pause * 2, 500);
    }
  }

  private async requireView(executionId: string, orgId: string | undefined): Promise<ExecutionView> {
    const view = z.uuid().safeParse(executionId).success ? await this.deps.queries.view(executionId) : null;
    // Another organisation's execution is reported exactly like a missing one.
    if (!view || (orgId !== undefined && view.orgId !== orgId)) {
      throw new TenorError(ENGINE_ERRORS.EXECUTION_NOT_FOUND, `execution ${executionId} was not found`, {
        details: { executionId },
      });
    }
    return view;
  }
}

/** SHA-256 of the canonical request, to tell a replayed request from a different one. */
export function hashRequest(workflow: string, input: unknown): string {
  return canonicalHash({ workflow, input });
}

/** True while the execution has not been admitted by the keyed gate yet (docs/keyed.md). */
function waitsForKey(view: ExecutionView | null): boolean {
  return view?.status === "waiting" && (view.waitingFor ?? []).some((w) => w.kind === "key");
}

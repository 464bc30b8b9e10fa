import type { FailureRecord } from "./errors.js";

/**
 * The engine's view of storage (docs/architecture.md, "Layers"): small, and implemented in
 * src/store with raw SQL on the journal's hot path. Every write that advances an execution carries
 * a Fence; a stale fence makes the write refuse (TurnFencedError) instead of applying.
 */

export type ExecutionStatus = "running" | "waiting" | "suspended" | "completed" | "failed";
export type JournalKind = "step" | "sleep" | "signal" | "child" | "condition" | "now" | "uuid" | "random";
/** `cancelled`: left pending when the execution ended; only a terminal execution has one. */
export type JournalState = "pending" | "ok" | "error" | "cancelled";

export interface JournalEntry {
  position: number;
  kind: JournalKind;
  name: string;
  state: JournalState;
  result: unknown;
  error: FailureRecord | null;
  attempts: number;
  /**
   * Delivery number: the order in which the body observed this outcome (docs/engine.md,
   * "Concurrent branches"). Null while pending, and for an outcome an activity worker recorded
   * that no turn has delivered yet.
   */
  seq: number | null;
  /** The delivery after which the body claimed this position (0: its first synchronous run). */
  cause: number | null;
}

/** The fencing token of one turn: the execution and the turn number it took. */
export interface Fence {
  executionId: string;
  turn: number;
}

/** Every kind of wait the status projection can show; the API schema is derived from this list. */
export const WAIT_KINDS = [
  "timer",
  "signal",
  "approval",
  "child",
  "activity",
  "condition",
  "recovery",
  "fix",
  "key",
  "funding",
  "confirmation",
  "pause",
  "nonce",
] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/** One thing a waiting execution waits for, as the status projection shows it. */
export interface WaitDescriptor {
  kind: WaitKind;
  name: string;
  position?: number;
  /** ISO timestamp of the deadline or wake time, when there is one. */
  until?: string;
  /** Kind-specific facts: the child's id, the failing step, ... */
  details?: Record<string, unknown>;
}

/** An operator's pause of a run (docs/engine.md, "Pause"), as the API recorded it. */
export interface PauseRecord {
  /** ISO timestamp of the pause request. */
  at: string;
  /** The API key that paused it, as it was then ({ keyId, name, subject, role }); null outside the API. */
  by: { subject: string } | null;
  /** Why, as the operator wrote it; null when no reason was given. */
  reason: string | null;
}

/** The name of the wait a paused run shows (kind `pause`). */
export const PAUSE_WAIT_NAME = "operator";

/**
 * The wait a paused run is parked on: its details are the pause record. The park statement builds
 * the same shape from the `paused` column (src/store/execution-sql.ts, `park`).
 */
export function pauseWait(pause: PauseRecord): WaitDescriptor {
  return { kind: "pause", name: PAUSE_WAIT_NAME, details: { ...pause } };
}

/** The subject a pause names ("paused by <subject>"), or null when no key asked for it. */
export function pausedBySubject(pause: { by?: unknown }): string | null {
  const by = pause.by as { subject?: unknown } | null | undefined;
  return by && typeof by.subject === "string" ? by.subject : null;
}

export interface TurnStart {
  fence: Fence;
  workflow: string;
  workflowVersion: number;
  orgId: string;
  input: unknown;
  parentId: string | null;
  recoveryAttempts: number;
  suspendedSince: Date | null;
  createdAt: Date;
  journal: JournalEntry[];
  /** Set when cancellation was requested: the turn ends the run `failed` with CANCELLED. */
  cancelRequestedAt?: Date | null;
  /** Who asked for the cancellation (the API key as it was then), recorded with the failure. */
  cancelRequestedBy?: Record<string, unknown> | null;
  /** Why, as the canceller wrote it. */
  cancelReason?: string | null;
  /** Set while an operator has the run paused: the turn parks it instead of running the body. */
  paused?: PauseRecord | null;
  /**
   * True when the previous turn parked cleanly (status `waiting`): everything it dispatched had
   * been handed to the queue before it parked. False after a turn that ended otherwise (a crash,
   * a suspension), whose dispatches may not have left.
   */
  afterCleanPark?: boolean;
}

export interface NewExecution {
  id: string;
  workflow: string;
  workflowVersion: number;
  orgId: string;
  input: unknown;
  key: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  parentId: string | null;
  parentPosition: number | null;
  /** The API key that started it (recorded for approvals: nobody approves their own request). */
  createdBy?: string | null;
  /** When the idempotency key is released; null keeps it bound for as long as the row lives. */
  idempotencyExpiresAt?: Date | null;
  /**
   * Set for a keyed workflow (docs/keyed.md, "Keyed workflows"): the execution is created `waiting`
   * for its key and only runs once the keyed gate admits it (src/keyed). Unset: created `running`.
   */
  waitingFor?: WaitDescriptor[] | null;
}

export interface ExecutionSummary {
  id: string;
  workflow: string;
  orgId: string;
  status: ExecutionStatus;
  output: unknown;
  failure: FailureRecord | null;
  requestHash: string | null;
  parentId: string | null;
}

export interface ExecutionStore {
  /** Takes the next turn (fencing token) and loads the whole journal in one query; null when terminal or missing. */
  beginTurn(executionId: string): Promise<TurnStart | null>;
  appendEntry(fence: Fence, entry: JournalEntry): Promise<void>;
  /** Resolves a pending position exactly once, delivered as number `seq`. */
  resolveEntry(
    fence: Fence,
    position: number,
    seq: number,
    state: "ok" | "error",
    result: unknown,
    error: FailureRecord | null,
  ): Promise<void>;
  /** Records the delivery number of an outcome a worker recorded outside any turn (an activity's). */
  numberDelivery(fence: Fence, position: number, seq: number): Promise<void>;
  /**
   * Consumes the oldest unconsumed signal of that name into the pending position, delivered as
   * number `seq`; null when none is there.
   */
  consumeSignal(
    fence: Fence,
    position: number,
    name: string,
    seq: number,
  ): Promise<{ payload: unknown } | null>;
  /** The execution's current turn (null when it is gone): a runner that stalled checks its fence. */
  currentTurn(executionId: string): Promise<number | null>;
  /**
   * The current turn and pause of the execution (null when it is gone): a long turn reads it
   * before a step's work, so a pause requested while it runs stops it after the step it is in.
   */
  turnControl(executionId: string): Promise<{ turn: number; paused: PauseRecord | null } | null>;
  /** Inserts a child execution unless it exists; returns its summary either way. */
  createExecution(
    execution: NewExecution,
    fence?: Fence,
  ): Promise<{ summary: ExecutionSummary; created: boolean }>;
  getSummary(executionId: string): Promise<ExecutionSummary | null>;
  setProgress(fence: Fence, progress: Record<string, unknown>): Promise<void>;
  /**
   * Ends the execution `completed`. `ahead`: step rows the body already saw that are not yet
   * written (JournalCursor.commitAhead), written by the same statement. A row PostgreSQL refuses is
   * journaled as a refusal instead and the call rejects with RESULT_NOT_STORABLE, completing nothing.
   */
  complete(fence: Fence, output: unknown, ahead?: readonly JournalEntry[]): Promise<void>;
  fail(fence: Fence, failure: FailureRecord): Promise<void>;
  park(fence: Fence, waits: WaitDescriptor[], wakeAt: Date | null): Promise<void>;
  /** `newOutage` restarts the recovery count and clock (the turn got past the previous outage). */
  suspend(
    fence: Fence,
    wait: WaitDescriptor,
    wakeAt: Date,
    newOutage: boolean,
  ): Promise<{ attempts: number; since: Date }>;
  hold(fence: Fence, failure: FailureRecord, wakeAt: Date): Promise<void>;
}

import { TenorError } from "../errors/tenor-error.js";
import type { ContextDeps, WaitDeadline } from "./context.js";
import { toMilliseconds } from "./duration.js";
import { type FailureRecord, NonDeterminismError, TurnFencedError } from "./errors.js";
import type { JournalEntry, JournalKind } from "./execution-store.js";
import { StopSignal, TurnStop } from "./turn-stop.js";

/** Attempts of a checkpoint write that failed for an infrastructure reason, before suspending. */
const CHECKPOINT_WRITE_ATTEMPTS = 3;

/**
 * The journal machinery of one turn, shared by every context call: positions taken in call
 * order and checked against the journal, fenced writes, the calls in flight, and why the turn
 * stops. WorkflowContext is the public face; the calls themselves live in context-steps.ts,
 * context-waits.ts and context-children.ts.
 */
export class JournalCursor {
  readonly executionId: string;
  readonly stop = new TurnStop();
  private readonly journal = new Map<number, JournalEntry>();
  private nextPosition = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Positions this turn journaled or resolved: any means the execution moved past its last outage. */
  private journaledThisTurn = 0;

  constructor(readonly deps: ContextDeps) {
    this.executionId = deps.fence.executionId;
    for (const entry of deps.journal) this.journal.set(entry.position, entry);
  }

  /** True while the body is still re-running positions the journal already holds. */
  get replaying(): boolean {
    return this.nextPosition < this.journal.size;
  }

  /** True when this turn journaled or resolved at least one position (it made progress). */
  get madeProgress(): boolean {
    return this.journaledThisTurn > 0;
  }

  noteProgress(): void {
    this.journaledThisTurn++;
    this.stop.resolvedAfterClose();
  }

  /** Takes the next position and checks it against the journal. Must run synchronously at call time. */
  claim(kind: JournalKind, name: string): { position: number; entry: JournalEntry | undefined } {
    if (this.stop.closed) throw new StopSignal();
    const position = this.nextPosition++;
    const entry = this.journal.get(position);
    if (entry && (entry.kind !== kind || entry.name !== name)) {
      this.stop.hold(
        new NonDeterminismError(position, { kind: entry.kind, name: entry.name }, { kind, name }),
      );
      throw new StopSignal();
    }
    return { position, entry };
  }

  track<T>(promise: Promise<T>): Promise<T> {
    this.inflight.add(promise);
    const forget = () => this.inflight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** Waits until no call is in flight, so every finished step is journaled before the turn ends. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  deadlineOf(options: WaitDeadline): string | null {
    if (options.deadline) return options.deadline.toISOString();
    if (options.timeout !== undefined) {
      return new Date(this.deps.clock() + toMilliseconds(options.timeout)).toISOString();
    }
    return null;
  }

  async append(entry: JournalEntry): Promise<void> {
    await this.write(`journal position ${entry.position}`, () =>
      this.deps.store.appendEntry(this.deps.fence, entry),
    );
    this.journaledThisTurn++;
  }

  async resolve(
    position: number,
    state: "ok" | "error",
    result: unknown,
    error: FailureRecord | null,
  ): Promise<void> {
    await this.write(`journal position ${position}`, () =>
      this.deps.store.resolveEntry(this.deps.fence, position, state, result, error),
    );
    this.journaledThisTurn++;
    this.stop.resolvedAfterClose();
  }

  /**
   * A fenced write stops the turn at once. Any other failure is the store's (a dropped
   * connection): retried a few times, then the turn suspends and recovery tries again later.
   */
  async write<T>(what: string, operation: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        if (error instanceof TurnFencedError) {
          this.stop.fence();
          throw new StopSignal();
        }
        if (error instanceof TenorError && !error.retryable) throw error;
        if (attempt >= CHECKPOINT_WRITE_ATTEMPTS) {
          this.stop.suspend({
            kind: "recovery",
            name: what,
            details: { error: (error as Error).message, attempts: attempt },
          });
          throw new StopSignal();
        }
        await delay(50 * attempt);
      }
    }
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import { TenorError } from "../errors/tenor-error.js";
import { DEFAULT_MAX_STORED_VALUE_BYTES, escapeText, isStorableText } from "../values/storable.js";
import type { ContextDeps, WaitDeadline } from "./context-types.js";
import { DeliveryOrder } from "./delivery-order.js";
import { toMilliseconds } from "./duration.js";
import { assertStorable, type FailureRecord, NonDeterminismError, TurnFencedError } from "./errors.js";
import { type JournalEntry, type JournalKind, pauseWait } from "./execution-store.js";
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
  /** Hands outcomes to the body in recorded order (concurrent branches replay exactly). */
  readonly order: DeliveryOrder;
  private nextPosition = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Positions this turn journaled or resolved: any means the execution moved past its last outage. */
  private journaledThisTurn = 0;
  /** Monotonic time (ms) at which this turn last proved its fence: its start or a fenced write. */
  private fenceConfirmedAt: number;
  /** Monotonic time (ms) at which this turn last read whether the run is paused: its start or a pause check. */
  private pauseCheckedAt: number;
  /** Step rows whose outcome the body already has, not yet sent (see commitAhead). */
  private ahead: JournalEntry[] = [];
  /** The write of rows sent from `ahead`, while in flight. */
  private sending: Promise<void> | null = null;
  /** Keeps the turn from parking while rows are ahead of the journal (DeliveryOrder.hold). */
  private releaseAhead: (() => void) | null = null;
  private flushTimer: ReturnType<typeof setImmediate> | null = null;
  /** A row ahead of the journal could not be written: the body saw what the journal does not hold. */
  private aheadLost = false;
  private stoppedBody = false;

  constructor(readonly deps: ContextDeps) {
    this.executionId = deps.fence.executionId;
    let highestSeq = 0;
    for (const entry of deps.journal) {
      this.journal.set(entry.position, entry);
      if (entry.seq !== null && entry.seq > highestSeq) highestSeq = entry.seq;
    }
    this.order = new DeliveryOrder(highestSeq);
    this.fenceConfirmedAt = deps.fenceConfirmedAt ?? performance.now();
    this.pauseCheckedAt = this.fenceConfirmedAt;
  }

  /**
   * A StopSignal for the body. Remembers that the body was told to stop, so a body that fails
   * afterwards may have turned that signal into its error (see `bodyWasStopped`).
   */
  halt(): StopSignal {
    this.stoppedBody = true;
    return new StopSignal();
  }

  /** True once this turn handed the body a StopSignal. */
  get bodyWasStopped(): boolean {
    return this.stoppedBody;
  }

  /** Largest value, in bytes of its JSON, this turn hands to storage. */
  get maxStoredValueBytes(): number {
    return this.deps.maxStoredValueBytes ?? DEFAULT_MAX_STORED_VALUE_BYTES;
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

  /**
   * Takes the next position and checks it against the journal: the same kind and name, claimed
   * after the same delivery (its cause). Must run synchronously at call time.
   */
  claim(
    kind: JournalKind,
    name: string,
  ): { position: number; cause: number; entry: JournalEntry | undefined } {
    if (this.deps.abandoned?.()) this.stop.fence();
    if (this.stop.closed) throw this.halt();
    // Refused before it takes a position, so replay takes the same positions (the same code
    // refuses the same name again).
    if (!isStorableText(name)) assertStorable(`the name of ${kind} "${escapeText(name)}"`, name);
    const position = this.nextPosition++;
    const cause = this.order.lastDelivered;
    const entry = this.journal.get(position);
    if (!entry && this.deps.replayOnly) {
      // A dry replay (src/engine/dry-replay.ts) ends at the first call the journal has not recorded.
      this.stop.fence();
      throw this.halt();
    }
    if (entry && (entry.kind !== kind || entry.name !== name)) {
      this.stop.hold(
        new NonDeterminismError(position, { kind: entry.kind, name: entry.name }, { kind, name }),
      );
      throw this.halt();
    }
    if (entry && entry.cause !== null && entry.cause !== cause) {
      this.stop.hold(
        new NonDeterminismError(
          position,
          { kind: entry.kind, name: entry.name, cause: entry.cause },
          { kind, name, cause },
        ),
      );
      throw this.halt();
    }
    return { position, cause, entry };
  }

  /**
   * Writes a live outcome under the next delivery number and hands it to the body in delivery
   * order (see DeliveryOrder). `outcome` runs at delivery: its value resolves, its throw rejects.
   */
  async commit<T>(write: (seq: number) => Promise<void>, outcome: () => T): Promise<T> {
    const seq = this.order.issue();
    try {
      await write(seq);
    } catch (error) {
      this.order.abandon(seq);
      throw error;
    }
    return this.deliverAt(seq, outcome);
  }

  /**
   * Hands a step's outcome to the body at once, ahead of its row, which is written with the next
   * thing the turn does that has an effect: before another step's work, any other write or
   * dispatch, and before the turn ends (docs/engine.md, "Outcomes ahead of their rows"). A body
   * that returns right after its last step completes in the same statement that writes that row;
   * otherwise the row leaves by the end of this turn of the event loop, as a row handed to the
   * journal's group commit would. Until the row commits, nothing the body does takes effect, so a
   * crash in between re-runs only that step, as a crash during its write always did.
   */
  commitAhead<T>(row: Omit<JournalEntry, "seq">, outcome: () => T): Promise<T> {
    // After a row was lost the turn is stopping to replay; this step's row is written all the same.
    if (this.aheadLost) return this.recordAfterLoss(row);
    const seq = this.order.issue();
    this.ahead.push({ ...row, seq });
    this.releaseAhead ??= this.order.hold();
    return this.deliverAt(seq, () => {
      // Scheduled at delivery, so the body's continuation (and the completion of a body that
      // returns) runs first; DeliveryOrder delivers from setImmediate too.
      this.flushTimer ??= setImmediate(() => {
        this.flushTimer = null;
        // A failure has set the stop reason; the next call, or the turn's end, meets it.
        this.durable().catch(() => undefined);
      });
      return outcome();
    });
  }

  /**
   * Resolves once every row ahead of the journal committed. A row that could not be written stops
   * the turn (StopSignal): fenced, suspended after retries, or, when PostgreSQL refused the row,
   * replayed by a new turn, since the body has seen an outcome the journal does not hold.
   */
  async durable(): Promise<void> {
    if (this.aheadLost) throw this.halt();
    while (this.ahead.length > 0 || this.sending) {
      if (!this.sending) {
        const rows = this.takeAhead();
        this.sending = this.writeAhead(rows).finally(() => {
          this.sending = null;
        });
      }
      await this.sending;
    }
    this.releaseAhead?.();
    this.releaseAhead = null;
  }

  /**
   * For the turn's completion: the rows still ahead of the journal, now the caller's to write in
   * the completion's own statement. A write of earlier rows already in flight is awaited first.
   */
  async takeAheadForCompletion(): Promise<JournalEntry[]> {
    if (this.aheadLost) throw this.halt();
    while (this.sending) await this.sending;
    const rows = this.takeAhead();
    this.releaseAhead?.();
    this.releaseAhead = null;
    return rows;
  }

  private takeAhead(): JournalEntry[] {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = null;
    return this.ahead.splice(0);
  }

  private async writeAhead(rows: JournalEntry[]): Promise<void> {
    const sent = performance.now();
    const outcomes = await Promise.allSettled(rows.map((row) => this.appendRow(row)));
    const lost = outcomes.find((outcome) => outcome.status === "rejected");
    if (!lost) {
      this.fenceConfirmedAt = sent;
      return;
    }
    this.aheadLost = true;
    if (!(lost.reason instanceof StopSignal)) this.stop.replay();
    // Rows handed over while this write was in flight belong to steps that finished: each is
    // written whatever happened to its sibling's row, so its work never runs again.
    await Promise.allSettled(this.takeAhead().map((row) => this.appendRow(row)));
    // Let parked calls stop so the turn can end.
    this.releaseAhead?.();
    this.releaseAhead = null;
    throw this.halt();
  }

  /** Writes one finished step's row, with the write's retries; counts it as progress. */
  private async appendRow(row: JournalEntry): Promise<void> {
    await this.writeWithRetries(`journal position ${row.position}`, () =>
      this.deps.store.appendEntry(this.deps.fence, row),
    );
    this.journaledThisTurn++;
  }

  /**
   * The row of a step that finished (its result, or its refusal) is written even when a sibling's
   * row was lost: the turn is stopping to replay, so the outcome is not delivered, but its row
   * skips the wait for the rows ahead (which will never be written) and the next turn replays it
   * instead of running the work again (docs/engine.md, "What at least once means").
   */
  private async recordAfterLoss(row: Omit<JournalEntry, "seq">): Promise<never> {
    const seq = this.order.issue();
    try {
      await this.appendRow({ ...row, seq });
    } catch {
      // Refused or fenced: the stop reason says so; a refused row was journaled as its refusal.
    } finally {
      this.order.abandon(seq);
    }
    throw this.halt();
  }

  /**
   * Writes the row of a finished step before its outcome reaches the body (a refusal, an
   * unstorable result); after a sibling's row was lost, it is written all the same (recordAfterLoss).
   */
  async commitFinished<T>(row: Omit<JournalEntry, "seq">, outcome: () => T): Promise<T> {
    if (this.aheadLost) return this.recordAfterLoss(row);
    let sent = false;
    try {
      return await this.commit(
        (seq) =>
          this.append({ ...row, seq }, () => {
            sent = true;
          }),
        outcome,
      );
    } catch (error) {
      // The wait for the rows ahead met a lost row before this one was sent.
      if (!sent && this.aheadLost && error instanceof StopSignal) return this.recordAfterLoss(row);
      throw error;
    }
  }

  /** Hands an outcome whose number was issued with `order.issue()` and is now durable to the body. */
  deliverAt<T>(seq: number, outcome: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.order.settle(seq, () => {
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      }),
    );
  }

  /**
   * Replays a recorded outcome at its recorded delivery number. An outcome recorded outside a
   * turn (an activity's worker) has none yet: this turn numbers it and records the number first.
   */
  async replay<T>(entry: JournalEntry, outcome: () => T): Promise<T> {
    if (entry.seq !== null) return this.order.replay(entry.seq, outcome);
    return this.commit(
      (seq) =>
        this.write(`delivery of position ${entry.position}`, () =>
          this.deps.store.numberDelivery(this.deps.fence, entry.position, seq),
        ),
      outcome,
    );
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

  /** `onSend` runs when the row is handed to the store (after the rows ahead of it committed). */
  async append(entry: JournalEntry, onSend?: () => void): Promise<void> {
    const sent = performance.now();
    await this.write(`journal position ${entry.position}`, () => {
      onSend?.();
      return this.deps.store.appendEntry(this.deps.fence, entry);
    });
    this.fenceConfirmedAt = sent;
    this.journaledThisTurn++;
  }

  /**
   * Proves the fence before work with an external effect when this turn has not proved it for
   * longer than `staleFenceMs`: a process that was stopped (SIGSTOP, a VM freeze, a long GC) does
   * not know it slept, and another runner may have taken the execution over meanwhile. A fenced
   * write costs nothing extra (it proves the fence as it commits), so the check runs at most
   * once per window per execution, and only for slow steps or after a stall. The check repeats
   * when the check itself took longer than the window (the stall happened while it waited).
   */
  async confirmFenceIfStale(): Promise<void> {
    if (this.deps.abandoned?.()) {
      this.stop.fence();
      throw this.halt();
    }
    const bound = this.deps.staleFenceMs;
    if (bound === undefined) return;
    while (performance.now() - this.fenceConfirmedAt > bound) {
      const sent = performance.now();
      const turn = await this.write("fence check", () => this.deps.store.currentTurn(this.executionId));
      if (turn !== this.deps.fence.turn) {
        this.stop.fence();
        throw this.halt();
      }
      this.fenceConfirmedAt = sent;
    }
  }

  /**
   * Stops the turn before a step's work when an operator paused the run while it ran
   * (docs/engine.md, "Pause"): the step the body is in has finished and its row is written, no
   * other starts. Read at most once per `staleFenceMs` of the turn (its start read it first), with
   * the fence: a turn that runs longer than that notices a pause before its next step; a shorter one
   * ends on its own and its park statement parks it on the pause.
   */
  async stopIfPaused(): Promise<void> {
    const bound = this.deps.staleFenceMs;
    if (bound === undefined || performance.now() - this.pauseCheckedAt <= bound) return;
    const sent = performance.now();
    const control = await this.write("pause check", () => this.deps.store.turnControl(this.executionId));
    this.pauseCheckedAt = sent;
    if (control?.turn !== this.deps.fence.turn) {
      this.stop.fence();
      throw this.halt();
    }
    this.fenceConfirmedAt = sent;
    if (control.paused) {
      this.stop.park(pauseWait(control.paused), null);
      throw this.halt();
    }
  }

  async resolve(
    position: number,
    seq: number,
    state: "ok" | "error",
    result: unknown,
    error: FailureRecord | null,
  ): Promise<void> {
    const sent = performance.now();
    await this.write(`journal position ${position}`, () =>
      this.deps.store.resolveEntry(this.deps.fence, position, seq, state, result, error),
    );
    this.fenceConfirmedAt = sent;
    this.journaledThisTurn++;
    this.stop.resolvedAfterClose();
  }

  /**
   * A fenced write stops the turn at once. Any other failure is the store's (a dropped
   * connection): retried a few times, then the turn suspends and recovery tries again later.
   */
  async write<T>(what: string, operation: () => Promise<T>): Promise<T> {
    const release = this.order.hold();
    try {
      await this.durable();
      return await this.writeWithRetries(what, operation);
    } finally {
      release();
    }
  }

  /**
   * The promise a parked call returns: it rejects with StopSignal once nothing else can reach the
   * body (DeliveryOrder.park), so an outcome on its way is still delivered first.
   */
  parked<T>(): Promise<T> {
    return new Promise<T>((_, reject) => this.order.park(() => reject(this.halt())));
  }

  private async writeWithRetries<T>(what: string, operation: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        if (error instanceof TurnFencedError) {
          this.stop.fence();
          throw this.halt();
        }
        if (error instanceof TenorError && !error.retryable) throw error;
        if (attempt >= CHECKPOINT_WRITE_ATTEMPTS) {
          this.stop.suspend({
            kind: "recovery",
            name: what,
            details: { error: (error as Error).message, attempts: attempt },
          });
          throw this.halt();
        }
        await delay(50 * attempt);
      }
    }
  }
}

/**
 * Runs a store write again after an infrastructure failure (a serialization failure, a dropped
 * connection), a few times with a short growing pause; a typed refusal (a stale fence, a value the
 * server refused) is thrown at once. For the writes made outside a cursor: the completion that
 * carries the last step's row, an activity's outcome. A transient error retries the write, never
 * the work.
 */
export async function retryTransient<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof TenorError && !error.retryable) throw error;
      if (attempt >= CHECKPOINT_WRITE_ATTEMPTS) throw error;
      await delay(50 * attempt);
    }
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

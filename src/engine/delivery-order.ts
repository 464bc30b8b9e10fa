/**
 * The order in which a turn hands journaled outcomes back to the workflow body (docs/engine.md,
 * "Concurrent branches").
 *
 * Positions are taken in call order. When several branches run at once (`Promise.all` of async
 * functions that each make several calls), which branch makes its next call first depends on
 * which of their awaits resolved first. Replay must resolve those awaits in the same order, or a
 * position recorded by one branch is handed to another (both pass the name check when the
 * branches use the same step names). So every outcome the body observes is a *delivery* with a
 * sequence number recorded next to the journal entry, and deliveries happen:
 *
 * - in ascending sequence number, live and on replay alike;
 * - one at a time, each from its own macrotask, so every continuation the previous delivery
 *   triggered has run (and taken its positions) before the next one is delivered.
 *
 * A live outcome takes the next number when its write is issued and is delivered once the write
 * committed and every lower number this turn issued was delivered or abandoned. A replayed
 * outcome is delivered at its recorded number. This is the recorded-order replay of Temporal's
 * history: the body sees the same interleaving on every replay, whatever the timing.
 *
 * `lastDelivered` is the cause of every position claimed while the body runs: the number of the
 * delivery whose continuation made the call (0: the body's first synchronous run). It is recorded
 * with each position and compared on replay, so code that resumes from anything but a delivery
 * (a plain timer, an un-journaled fetch) is held for non-determinism instead of being replayed in
 * another order.
 */
export class DeliveryOrder {
  private nextSeq: number;
  /** Numbers issued live whose outcome is not yet ready (write in flight). */
  private readonly outstanding = new Set<number>();
  /** Outcomes ready to be handed to the body, by number. */
  private readonly ready = new Map<number, () => void>();
  private pumping = false;
  private delivered = 0;
  /** Operations in flight that may still produce an outcome (a store call, a step's work). */
  private holds = 0;
  /** Parked calls, told to stop only once nothing else can reach the body (see `park`). */
  private readonly parked: (() => void)[] = [];

  /** @param highestRecorded the highest sequence number in the journal (0 when none). */
  constructor(highestRecorded: number) {
    this.nextSeq = highestRecorded + 1;
  }

  /** The number of the delivery whose continuation is running now (0 before the first). */
  get lastDelivered(): number {
    return this.delivered;
  }

  /** Issues the next number for an outcome whose write is about to start. */
  issue(): number {
    const seq = this.nextSeq++;
    this.outstanding.add(seq);
    return seq;
  }

  /** The outcome numbered `seq` is durable: `deliver` runs once every lower number is settled. */
  settle(seq: number, deliver: () => void): void {
    this.outstanding.delete(seq);
    this.ready.set(seq, deliver);
    this.schedule();
  }

  /** The number will never be delivered (the write failed, or the wait parked instead). */
  abandon(seq: number): void {
    if (this.outstanding.delete(seq)) this.schedule();
  }

  /**
   * Marks an operation in flight that may still produce an outcome; call the returned function
   * when it ended. Parked calls wait for every such operation.
   */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.schedule();
    };
  }

  /**
   * A call that parked (a wait that cannot finish now) is told so last: once no outcome is ready,
   * issued or in the making. A branch that lost a `Promise.race` to a parked timer therefore still
   * receives the outcome that was on its way, as it did on the turn that recorded it, and a park
   * never overtakes an outcome because it needed no round trip.
   */
  park(stop: () => void): void {
    this.parked.push(stop);
    this.schedule();
  }

  /** Resolves with the value at the recorded number's turn; rejects likewise with `error`. */
  replay<T>(seq: number, outcome: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.ready.set(seq, () => {
        try {
          resolve(outcome());
        } catch (error) {
          reject(error);
        }
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.pumping || (this.ready.size === 0 && this.parked.length === 0)) return;
    this.pumping = true;
    setImmediate(() => this.pump());
  }

  /**
   * Delivers the lowest ready outcome unless a lower number is still in flight; with nothing ready,
   * issued or held, tells the parked calls to stop.
   */
  private pump(): void {
    this.pumping = false;
    if (this.ready.size > 0) {
      let lowest = Number.POSITIVE_INFINITY;
      for (const seq of this.ready.keys()) if (seq < lowest) lowest = seq;
      for (const seq of this.outstanding) if (seq < lowest) return; // settle/abandon reschedules
      const deliver = this.ready.get(lowest);
      if (!deliver) return;
      this.ready.delete(lowest);
      this.delivered = lowest;
      deliver();
      this.schedule();
      return;
    }
    if (this.outstanding.size === 0 && this.holds === 0) {
      for (const stop of this.parked.splice(0)) stop();
    }
  }
}

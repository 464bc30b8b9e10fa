/**
 * When a group of calls leaves: `immediate` on the next turn of the event loop (`setImmediate`,
 * what Tenor's journal and start batchers do), `microtask` as soon as the current synchronous run
 * ends (only calls made in one run share a group), `at-once` with no wait at all while fewer than
 * `maxInFlight` writes run (calls gather only behind writes in flight), `at-once-when-idle` with
 * no wait while no write runs and as `microtask` otherwise, or after a timer of `afterMs`
 * milliseconds.
 */
export type FlushOn = "immediate" | "microtask" | "at-once" | "at-once-when-idle" | { afterMs: number };

export interface TickGroupOptions {
  flushOn: FlushOn;
  /** Most items one write carries. */
  maxBatch: number;
  /** Writes in flight at once; while they run, the next group gathers. */
  maxInFlight: number;
}

interface Pending<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Groups the calls of every caller into one write per flush, for the benchmark's floor: the same
 * group commit Tenor's batchers do (src/store/tick-batcher.ts), with the flush moment as a
 * parameter so the floor can be measured with each. `write` answers each item in order; if it
 * throws, every caller of that group is rejected with its error.
 */
export class TickGroup<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly write: (items: readonly T[]) => Promise<readonly R[]>,
    private readonly options: TickGroupOptions,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.flush();
    };
    const { flushOn } = this.options;
    if (flushOn === "at-once" || (flushOn === "at-once-when-idle" && this.inFlight === 0)) run();
    else if (flushOn === "at-once-when-idle") queueMicrotask(run);
    else if (flushOn === "immediate") setImmediate(run);
    else if (flushOn === "microtask") queueMicrotask(run);
    else setTimeout(run, flushOn.afterMs);
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const group = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.settle(group).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  private async settle(group: Pending<T, R>[]): Promise<void> {
    let answers: readonly R[];
    try {
      answers = await this.write(group.map((p) => p.item));
    } catch (error) {
      for (const pending of group) pending.reject(error);
      return;
    }
    group.forEach((pending, i) => {
      if (i < answers.length) pending.resolve(answers[i] as R);
      else pending.reject(new Error("the group's write gave no answer for this item"));
    });
  }
}

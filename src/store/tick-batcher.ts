import { isDataError, JOURNAL_GROUP_COMMIT } from "./journal-batcher.js";

/** One caller's share of a batch: its own value or its own error. */
export type BatchOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export interface TickBatcherLimits {
  /** Most items one write carries (default: the journal's, 256): keeps statements and lock sets small. */
  maxBatch?: number;
  /** Writes in flight at once (default: the journal's, 4); while they run, the next batch gathers. */
  maxInFlight?: number;
}

/**
 * Groups calls made in the same turn of the event loop into one write, as the journal's group
 * commit does for appends (src/store/journal-batcher.ts): a single call still leaves on the next
 * turn of the event loop, so a lone caller pays one round trip. `write` answers every item of a
 * batch with its own outcome, so one caller's failure (an idempotency conflict, a refused row)
 * never fails the others; if `write` itself throws, every caller of that batch is rejected with
 * it and retries its own call.
 */
export class TickBatcher<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly write: (items: readonly T[]) => Promise<BatchOutcome<R>[]>,
    limits: TickBatcherLimits = {},
  ) {
    this.maxBatch = limits.maxBatch ?? JOURNAL_GROUP_COMMIT.maxBatch;
    this.maxInFlight = limits.maxInFlight ?? JOURNAL_GROUP_COMMIT.maxInFlight;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      this.settle(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  private async settle(batch: Pending<T, R>[]): Promise<void> {
    let outcomes: BatchOutcome<R>[];
    try {
      outcomes = await this.write(batch.map((p) => p.item));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i];
      if (!outcome) pending.reject(new Error("batch write returned no outcome for this item"));
      else if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }
}

/**
 * Runs one multi-row statement over `items`; when PostgreSQL refuses it for an error in the data
 * (SQLSTATE classes 22, 23, 54: one bad row fails the whole statement), splits the items in halves
 * until the bad row stands alone, and gives that row the error. Any other error is thrown: it
 * belongs to the connection or the server, not to a row.
 */
export async function isolatingDataErrors<T, R>(
  items: readonly T[],
  run: (items: readonly T[]) => Promise<BatchOutcome<R>[]>,
): Promise<BatchOutcome<R>[]> {
  try {
    return await run(items);
  } catch (error) {
    if (!isDataError(error)) throw error;
    if (items.length === 1) return [{ ok: false, error }];
    const half = Math.ceil(items.length / 2);
    const [first, second] = await Promise.all([
      isolatingDataErrors(items.slice(0, half), run),
      isolatingDataErrors(items.slice(half), run),
    ]);
    return [...first, ...second];
  }
}

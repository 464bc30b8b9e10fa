import type { Pool, QueryConfig } from "pg";
import { ENGINE_ERRORS } from "../engine/error-codes.js";
import { BusinessError, type FailureRecord } from "../engine/errors.js";
import type { Fence, JournalEntry } from "../engine/execution-store.js";
import { SQL } from "./execution-sql.js";

interface PendingAppend {
  fence: Fence;
  entry: JournalEntry;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * How the journal groups appends: a batch leaves on the next turn of the event loop
 * (`setImmediate`), carries at most `maxBatch` rows, and at most `maxInFlight` statements are in
 * flight; while they commit, the next batch gathers (group commit).
 */
export const JOURNAL_GROUP_COMMIT = {
  /** Most rows one statement carries; keeps statements and lock sets small. */
  maxBatch: 256,
  /** Statements in flight at once. */
  maxInFlight: 4,
} as const;
const MAX_BATCH = JOURNAL_GROUP_COMMIT.maxBatch;
const MAX_IN_FLIGHT = JOURNAL_GROUP_COMMIT.maxInFlight;

/**
 * Group commit for journal appends. Appends made by concurrent executions in the same tick go to
 * PostgreSQL as one fenced multi-row INSERT and one commit, so the cost of a durable commit is
 * shared. A single append still leaves on the next turn of the event loop, so serial latency is
 * one round trip. Each caller learns whether its own row was written (false: fenced).
 *
 * A failure stays with its row: PostgreSQL refuses a whole statement for one bad row, so a batch
 * that fails with a data error (SQLSTATE classes 22, 23, 54, see {@link isDataError}) is split in
 * halves until the bad row stands alone. That row is journaled as an error RESULT_NOT_STORABLE
 * naming its step, and its caller is rejected with that non-retryable error: a data error is not
 * transient, and a replay meets the recorded failure instead of re-running the step. Any other
 * error (the connection, the server) rejects the whole batch; each caller retries its own append.
 */
export class JournalBatcher {
  private queue: PendingAppend[] = [];
  private inFlight = 0;
  private scheduled = false;

  /** `onBatch` learns the row count of every statement written (metrics); it must not throw. */
  constructor(
    private readonly pool: Pool,
    private readonly onBatch?: (rows: number) => void,
  ) {}

  append(fence: Fence, entry: JournalEntry): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ fence, entry, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < MAX_IN_FLIGHT) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.onBatch?.(batch.length);
      this.inFlight++;
      this.write(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  private async write(batch: PendingAppend[]): Promise<void> {
    try {
      const written = await this.insert(batch);
      for (const item of batch) item.resolve(written.has(keyOf(item.fence.executionId, item.entry.position)));
    } catch (error) {
      if (!isDataError(error)) {
        for (const item of batch) item.reject(error);
        return;
      }
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await Promise.all([this.write(batch.slice(0, half)), this.write(batch.slice(half))]);
        return;
      }
      await this.refuseRow(batch[0] as PendingAppend, error as DatabaseError);
    }
  }

  private async insert(batch: PendingAppend[]): Promise<Set<string>> {
    const { rows } = await this.pool.query(
      batch.length === 1 ? singleRow(batch[0] as PendingAppend) : multiRow(batch),
    );
    return new Set(
      rows.map((r: { execution_id: string; position: number }) => keyOf(r.execution_id, r.position)),
    );
  }

  /** Journals the position as RESULT_NOT_STORABLE in place of the refused row, then rejects its caller. */
  private async refuseRow(item: PendingAppend, cause: DatabaseError): Promise<void> {
    const { entry } = item;
    const refusal = new BusinessError(
      ENGINE_ERRORS.RESULT_NOT_STORABLE,
      `${entry.kind} "${entry.name}" at position ${entry.position} produced a value PostgreSQL cannot store ` +
        `(SQLSTATE ${cause.code}: ${cause.message}); it fails once and is not retried`,
      { step: entry.name, position: entry.position, sqlstate: cause.code },
    );
    const failure: FailureRecord = {
      name: refusal.name,
      code: refusal.code,
      message: refusal.message,
      details: refusal.details,
      retryable: false,
    };
    const replacement = { ...entry, state: "error" as const, result: null, error: failure };
    try {
      await this.insert([{ ...item, entry: replacement }]);
    } catch (error) {
      // Not even the refusal fits (the step's name itself is unstorable): the caller still fails once.
      item.reject(isDataError(error) ? refusal : error);
      return;
    }
    item.reject(refusal);
  }
}

/** The fields of a `pg` server error this module reads. */
interface DatabaseError {
  code: string;
  message: string;
}

/**
 * True for an error in the data itself, which the same row meets on every retry: SQLSTATE class
 * 22 (data exception, e.g. 22P05 untranslatable character), 23 (integrity constraint violation)
 * and 54 (program limit exceeded, e.g. a value too large to index).
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.length === 5 && ["22", "23", "54"].includes(code.slice(0, 2));
}

function keyOf(executionId: string, position: number): string {
  return `${executionId}/${position}`;
}

/** Named statements are parsed and planned once per connection: measured, planning was half the cost. */
function singleRow(item: PendingAppend): QueryConfig {
  return { name: "tenor_append_entry", text: SQL.appendEntry, values: rowOf(item) };
}

function multiRow(batch: PendingAppend[]): QueryConfig {
  const columns: unknown[][] = [[], [], [], [], [], [], [], [], [], [], []];
  for (const item of batch) for (const [i, value] of rowOf(item).entries()) columns[i]?.push(value);
  return { name: "tenor_append_entries", text: SQL.appendEntries, values: columns };
}

/** The statement parameters of one append, in the column order both statements use. */
function rowOf({ fence, entry }: PendingAppend): unknown[] {
  return [
    fence.executionId,
    fence.turn,
    entry.position,
    entry.kind,
    entry.name,
    entry.state,
    jsonText(entry.result),
    jsonText(entry.error),
    entry.attempts,
    entry.seq,
    entry.cause,
  ];
}

function jsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

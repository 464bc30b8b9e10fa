import type { Pool, QueryConfig } from "pg";
import type { Fence, JournalEntry } from "../engine/execution-store.js";
import { SQL } from "./execution-sql.js";

interface PendingAppend {
  fence: Fence;
  entry: JournalEntry;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

/** Most rows one statement carries; keeps statements and lock sets small. */
const MAX_BATCH = 256;
/** Statements in flight at once; while they commit, the next batch gathers (group commit). */
const MAX_IN_FLIGHT = 4;

/**
 * Group commit for journal appends. Appends made by concurrent executions in the same tick go to
 * PostgreSQL as one fenced multi-row INSERT and one commit, so the cost of a durable commit is
 * shared. A single append still leaves on the next turn of the event loop, so serial latency is
 * one round trip. Each caller learns whether its own row was written (false: fenced).
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
      const { rows } = await this.pool.query(
        batch.length === 1 ? singleRow(batch[0] as PendingAppend) : multiRow(batch),
      );
      const written = new Set(
        rows.map((r: { execution_id: string; position: number }) => `${r.execution_id}/${r.position}`),
      );
      for (const item of batch) item.resolve(written.has(`${item.fence.executionId}/${item.entry.position}`));
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }
}

/** Named statements are parsed and planned once per connection: measured, planning was half the cost. */
function singleRow(item: PendingAppend): QueryConfig {
  return { name: "tenor_append_entry", text: SQL.appendEntry, values: rowOf(item) };
}

function multiRow(batch: PendingAppend[]): QueryConfig {
  const columns: unknown[][] = [[], [], [], [], [], [], [], [], []];
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
  ];
}

function jsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

import type { Pool, PoolClient, QueryResult } from "pg";
import { ENGINE_ERRORS } from "../engine/error-codes.js";
import type { FailureRecord } from "../engine/errors.js";
import { BusinessError, TurnFencedError } from "../engine/errors.js";
import type {
  ExecutionStore,
  ExecutionSummary,
  Fence,
  JournalEntry,
  NewExecution,
  PauseRecord,
  TurnStart,
  WaitDescriptor,
} from "../engine/execution-store.js";
import { escapeText, escapeUnstorable, findUnstorable } from "../values/storable.js";
import {
  type Created,
  type Creation,
  columnsOf,
  createChildren,
  createStarts,
  toSummary,
} from "./execution-creation.js";
import { SQL } from "./execution-sql.js";
import { newExecutionTraceparent } from "./execution-trace.js";
import { isDataError, JournalBatcher } from "./journal-batcher.js";
import { json } from "./json-param.js";
import { type BatchOutcome, isolatingDataErrors, TickBatcher } from "./tick-batcher.js";
import { withTransaction } from "./with-transaction.js";

/**
 * The engine's store on PostgreSQL. The journal's hot path uses raw SQL on a `pg` pool: measured
 * here, the Prisma model API costs about 2.5× a raw insert, which alone would cap the engine below
 * its throughput target (environment notes). Prisma owns the schema and migrations; this module
 * only speaks the tables it defines.
 *
 * Fencing: every write joins the execution row `FOR SHARE` with the turn it carries. A newer
 * turn's `UPDATE ... SET turn = turn + 1` waits for that lock and a write arriving after it finds
 * the turn changed, so a stale runner can never write (docs/engine.md, "Fencing").
 */
export class PgExecutionStore implements ExecutionStore {
  private readonly journalBatcher: JournalBatcher;
  private readonly turnStarts: TickBatcher<string, TurnStart | null>;
  private readonly startCreations: TickBatcher<Creation, Created>;
  private readonly childCreations: TickBatcher<Creation, Created>;
  private readonly summaryLookups: TickBatcher<string, ExecutionSummary | null>;
  /** Terminal completions with the step rows ahead of them; true: completed under this fence. */
  private readonly completions: TickBatcher<
    { fence: Fence; output: string | null; ahead: readonly JournalEntry[] },
    boolean
  >;
  /** Resolutions of pending positions (a turn's children, timers, signals...); true: written. */
  private readonly resolutions: TickBatcher<{ fence: Fence; row: unknown[] }, boolean>;

  constructor(
    private readonly pool: Pool,
    options: { onJournalBatch?: (rows: number) => void } = {},
  ) {
    this.journalBatcher = new JournalBatcher(pool, options.onJournalBatch);
    this.turnStarts = new TickBatcher((ids) => this.beginTurns(ids));
    this.startCreations = new TickBatcher((items) => createStarts(pool, items));
    this.childCreations = new TickBatcher((items) => createChildren(pool, items));
    this.summaryLookups = new TickBatcher((ids) =>
      isolatingDataErrors(ids, async (batch) => {
        const { rows } = await pool.query({ name: "tenor_summaries", text: SQL.summaries, values: [batch] });
        const byId = new Map(rows.map((row) => [row.id as string, toSummary(row)]));
        return batch.map((id) => ({ ok: true, value: byId.get(id) ?? null }));
      }),
    );
    this.completions = new TickBatcher((items) =>
      isolatingDataErrors(items, async (batch) => {
        const rowsAhead = batch.flatMap(({ fence, ahead }) => ahead.map((entry) => ({ fence, entry })));
        const { rows } = await pool.query({
          name: "tenor_complete_many",
          text: SQL.completeMany,
          values: [
            ...columnsOf(batch, ({ fence, output }) => [fence.executionId, fence.turn, output]),
            ...padded(
              AHEAD_COLUMNS,
              columnsOf(rowsAhead, ({ fence, entry }) => [
                fence.executionId,
                entry.position,
                entry.kind,
                entry.name,
                entry.state,
                json(entry.result),
                json(entry.error),
                entry.attempts,
                entry.seq,
                entry.cause,
              ]),
            ),
          ],
        });
        const completed = new Set(rows.map((r) => r.id as string));
        return batch.map(({ fence }) => ({ ok: true, value: completed.has(fence.executionId) }));
      }),
    );
    this.resolutions = new TickBatcher((items) =>
      isolatingDataErrors(items, async (batch) => {
        const { rows } = await pool.query({
          name: "tenor_resolve_entries",
          text: SQL.resolveEntries,
          values: columnsOf(batch, (item) => item.row),
        });
        const written = new Set(rows.map((r) => `${r.execution_id}/${r.position}`));
        return batch.map(({ row }) => ({ ok: true, value: written.has(`${row[0]}/${row[2]}`) }));
      }),
    );
  }

  /**
   * Turns that begin in the same tick (a fan-out's children, a batch of starts) share one round
   * trip; a lone turn pays one round trip as before.
   */
  async beginTurn(executionId: string): Promise<TurnStart | null> {
    if (!UUID.test(executionId)) return null;
    return this.turnStarts.submit(executionId);
  }

  /**
   * One round trip, two statements: the simple protocol runs them in one implicit transaction and,
   * under READ COMMITTED, the journal read takes its snapshot after the increment's waits (see
   * SQL.beginTurns). The simple protocol takes no parameters: every id was checked to be a UUID.
   */
  private async beginTurns(ids: readonly string[]): Promise<BatchOutcome<TurnStart | null>[]> {
    const unique = [...new Set(ids)];
    if (unique.length < ids.length) {
      // Two processings of one execution in a batch (an abandoned one and its successor) must
      // not share a turn: as one after the other, the later call takes the next turn.
      const repeated = ids.flatMap((id, i) => (ids.indexOf(id) === i ? [] : [{ id, i }]));
      const outcomes = await this.beginTurns(unique);
      const byId = new Map(unique.map((id, i) => [id, outcomes[i] as BatchOutcome<TurnStart | null>]));
      const again = await this.beginTurns(repeated.map((r) => r.id));
      const result = ids.map((id) => byId.get(id) as BatchOutcome<TurnStart | null>);
      repeated.forEach((r, k) => {
        result[r.i] = again[k] as BatchOutcome<TurnStart | null>;
      });
      return result;
    }
    const [turnSql, journalSql] = [SQL.beginTurns, SQL.loadJournalsIfTaken].map((sql) =>
      sql.replaceAll("$1", `'{${ids.join(",")}}'`),
    );
    const [turns, journals] = (await this.pool.query(`${turnSql};\n${journalSql}`)) as unknown as [
      QueryResult,
      QueryResult,
    ];
    const journalOf = new Map<string, JournalEntry[]>();
    for (const raw of journals.rows as Array<RawEntry & { execution_id: string }>) {
      const id = raw.execution_id;
      const journal = journalOf.get(id);
      if (journal) journal.push(toEntry(raw));
      else journalOf.set(id, [toEntry(raw)]);
    }
    const started = new Map<string, TurnStart>();
    for (const row of turns.rows) {
      started.set(row.id, {
        fence: { executionId: row.id, turn: row.turn },
        workflow: row.workflow,
        workflowVersion: row.workflow_version,
        orgId: row.org_id,
        input: row.input,
        parentId: row.parent_id,
        recoveryAttempts: row.recovery_attempts,
        suspendedSince: row.suspended_since,
        createdAt: row.created_at,
        journal: journalOf.get(row.id) ?? [],
        cancelRequestedAt: row.cancel_requested_at,
        cancelRequestedBy: row.cancel_requested_by,
        cancelReason: row.cancel_reason,
        paused: row.paused,
        afterCleanPark: row.previous_status === "waiting" && !row.parked_paused,
      });
    }
    return ids.map((id) => ({ ok: true, value: started.get(id) ?? null }));
  }

  async currentTurn(executionId: string): Promise<number | null> {
    const { rows } = await this.pool.query({
      name: "tenor_current_turn",
      text: SQL.currentTurn,
      values: [executionId],
    });
    return rows[0] ? (rows[0].turn as number) : null;
  }

  async turnControl(executionId: string): Promise<{ turn: number; paused: PauseRecord | null } | null> {
    const { rows } = await this.pool.query({
      name: "tenor_turn_control",
      text: SQL.turnControl,
      values: [executionId],
    });
    const row = rows[0];
    return row ? { turn: row.turn as number, paused: (row.paused as PauseRecord | null) ?? null } : null;
  }

  async appendEntry(fence: Fence, entry: JournalEntry): Promise<void> {
    const written = await this.journalBatcher.append(fence, entry);
    if (written || (await this.entryOfTurn(fence, entry.position))) return;
    throw new TurnFencedError(fence.executionId, fence.turn, `journal position ${entry.position}`);
  }

  async resolveEntry(
    fence: Fence,
    position: number,
    seq: number,
    state: "ok" | "error",
    result: unknown,
    error: FailureRecord | null,
  ): Promise<void> {
    const written = await this.resolutions.submit({
      fence,
      row: [fence.executionId, fence.turn, position, state, json(result), json(error), seq],
    });
    if (written || (await this.entryOfTurn(fence, position))?.state === state) return;
    throw new TurnFencedError(fence.executionId, fence.turn, `resolution of position ${position}`);
  }

  async numberDelivery(fence: Fence, position: number, seq: number): Promise<void> {
    const { rowCount } = await this.pool.query(SQL.numberDelivery, [
      fence.executionId,
      fence.turn,
      position,
      seq,
    ]);
    if (rowCount === 1) return;
    // A retry after a lost reply finds its own number; anything else means the fence moved.
    const { rows } = await this.pool.query(SQL.lockFence, [fence.executionId, fence.turn]);
    const own = await this.pool.query(
      "SELECT seq FROM journal_entries WHERE execution_id = $1 AND position = $2",
      [fence.executionId, position],
    );
    if (rows.length === 1 && own.rows[0]?.seq === seq) return;
    throw new TurnFencedError(fence.executionId, fence.turn, `delivery of position ${position}`);
  }

  async consumeSignal(
    fence: Fence,
    position: number,
    name: string,
    seq: number,
  ): Promise<{ payload: unknown } | null> {
    return this.transaction(async (client) => {
      const fenced = await client.query(SQL.lockFence, [fence.executionId, fence.turn]);
      if (fenced.rowCount !== 1) throw new TurnFencedError(fence.executionId, fence.turn, `signal ${name}`);
      // A retry after a lost COMMIT reply: this turn already consumed a signal into this position.
      const own = await client.query(SQL.entryOfTurn, [fence.executionId, fence.turn, position]);
      if (own.rows[0]?.state === "ok") return { payload: own.rows[0].result.payload };
      const { rows } = await client.query(SQL.takeSignal, [fence.executionId, name, position]);
      const signal = rows[0];
      if (!signal) return null;
      const resolved = await client.query(SQL.resolveEntry, [
        fence.executionId,
        fence.turn,
        position,
        "ok",
        json({ timedOut: false, payload: signal.payload }),
        null,
        seq,
      ]);
      if (resolved.rowCount !== 1) throw new TurnFencedError(fence.executionId, fence.turn, `signal ${name}`);
      return { payload: signal.payload };
    });
  }

  /**
   * Creations in the same turn of the event loop share one statement (src/store/execution-creation.ts):
   * starts with starts, children with children. The trace context is taken here, in the caller's.
   */
  async createExecution(
    execution: NewExecution,
    fence?: Fence,
  ): Promise<{ summary: ExecutionSummary; created: boolean }> {
    const traceparent = newExecutionTraceparent(execution.workflow, execution.id);
    return fence
      ? this.childCreations.submit({ execution, traceparent, fence })
      : this.startCreations.submit({ execution, traceparent });
  }

  /** Lookups in the same turn of the event loop (a turn's children) share one statement. */
  async getSummary(executionId: string): Promise<ExecutionSummary | null> {
    return this.summaryLookups.submit(executionId);
  }

  async setProgress(fence: Fence, progress: Record<string, unknown>): Promise<void> {
    await this.fencedUpdate(fence, "progress", SQL.setProgress, [json(progress)]);
  }

  /**
   * Completions in the same turn of the event loop (concurrent executions) share one statement,
   * which also writes the step rows ahead of each. When PostgreSQL refuses one of them, the rows go
   * through the journal's own path, which journals a refusal in place of a refused row.
   */
  async complete(fence: Fence, output: unknown, ahead: readonly JournalEntry[] = []): Promise<void> {
    let completed: boolean;
    try {
      completed = await this.completions.submit({ fence, output: json(output), ahead });
    } catch (error) {
      if (!isDataError(error)) throw error;
      if (ahead.length === 0) throw outputNotStorable(fence, error);
      // Every finished step's row is written, whichever of them PostgreSQL refuses (a refused one
      // is journaled as its refusal and rejects with RESULT_NOT_STORABLE); then the output alone.
      const appended = await Promise.allSettled(ahead.map((entry) => this.appendEntry(fence, entry)));
      const refused = appended.find((outcome) => outcome.status === "rejected");
      if (refused) throw refused.reason;
      return this.complete(fence, output);
    }
    if (!completed) throw new TurnFencedError(fence.executionId, fence.turn, "completion");
  }

  /**
   * A failure is always recorded: the engine hands over a storable record (src/engine/errors.ts,
   * storableFailure), and should the server refuse it all the same (a value past its limits),
   * the code and the escaped, shortened message are kept without the details.
   */
  async fail(fence: Fence, failure: FailureRecord): Promise<void> {
    const { value, escaped } = escapeUnstorable(failure.message.slice(0, FAILURE_MESSAGE_FALLBACK_CHARS));
    const minimal: FailureRecord = {
      code: escapeText(failure.code),
      message: value as string,
      retryable: failure.retryable,
      details: { detailsDropped: "PostgreSQL refused the full record" },
      escaped: [...(failure.escaped ?? []), ...(escaped.length > 0 ? ["message"] : []), "details"],
    };
    await this.refusalTolerant([failure, failure, minimal], (record) =>
      this.fencedUpdate(fence, "failure", SQL.fail, [json(record)]),
    );
  }

  async park(fence: Fence, waits: WaitDescriptor[], wakeAt: Date | null): Promise<void> {
    await this.refusalTolerant(waitVersions(waits), (w) =>
      this.fencedUpdate(fence, "wait", SQL.park, [json(w), wakeAt]),
    );
  }

  /**
   * A turn-ending write the server refuses for its data is tried once more as it is (an integrity
   * error can come from a concurrent writer), then in its reduced form (a failure without its
   * details, waits without theirs), and only then refused: the run and the work behind it are
   * kept whenever a smaller record can hold them (docs/engine.md, "What PostgreSQL can store").
   */
  private async refusalTolerant<V, R>(versions: readonly V[], write: (version: V) => Promise<R>): Promise<R> {
    for (let i = 0; ; i++) {
      try {
        return await write(versions[i] as V);
      } catch (error) {
        if (!isRefusedRow(error) || i >= versions.length - 1) throw error;
      }
    }
  }

  async suspend(
    fence: Fence,
    wait: WaitDescriptor,
    wakeAt: Date,
    newOutage: boolean,
  ): Promise<{ attempts: number; since: Date }> {
    const row = await this.refusalTolerant(waitVersions([wait]), (w) =>
      this.fencedUpdate(fence, "suspension", SQL.suspend, [json(w), wakeAt, newOutage]),
    );
    return { attempts: row.recovery_attempts, since: row.suspended_since };
  }

  async hold(fence: Fence, failure: FailureRecord, wakeAt: Date): Promise<void> {
    const wait: WaitDescriptor = { kind: "fix", name: failure.code, details: { message: failure.message } };
    await this.refusalTolerant(waitVersions([wait]), (w) =>
      this.fencedUpdate(fence, "hold", SQL.hold, [json(failure), json(w), wakeAt]),
    );
  }

  /** This turn's own row at `position`, if it has one (see SQL.entryOfTurn). */
  private async entryOfTurn(fence: Fence, position: number): Promise<{ state: string } | undefined> {
    const { rows } = await this.pool.query(SQL.entryOfTurn, [fence.executionId, fence.turn, position]);
    return rows[0];
  }

  // biome-ignore lint/suspicious/noExplicitAny: a pg row, typed by the SQL that returns it.
  private async fencedUpdate(fence: Fence, what: string, sql: string, params: unknown[]): Promise<any> {
    let rows: unknown[];
    try {
      ({ rows } = await this.pool.query(sql, [fence.executionId, fence.turn, ...params]));
    } catch (error) {
      // A refusal for the data itself meets every retry: typed, so the turn ends the run once.
      if (!isDataError(error)) throw error;
      throw new BusinessError(
        ENGINE_ERRORS.VALUE_NOT_STORABLE,
        `PostgreSQL refused the ${what} of execution ${fence.executionId} ` +
          `(SQLSTATE ${(error as { code: string }).code}: ${escapeText((error as Error).message)})`,
        { what, sqlstate: (error as { code: string }).code },
      );
    }
    if (!rows[0]) throw new TurnFencedError(fence.executionId, fence.turn, what);
    return rows[0];
  }

  private transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work);
  }
}

/** How much of a failure's message is kept when PostgreSQL refused the whole record. */
const FAILURE_MESSAGE_FALLBACK_CHARS = 4_096;

/** The refusal `fencedUpdate` raises for a row PostgreSQL refused for its data. */
function isRefusedRow(error: unknown): boolean {
  return error instanceof BusinessError && error.code === ENGINE_ERRORS.VALUE_NOT_STORABLE;
}

/** A completion whose output PostgreSQL refused although it passed the engine's check. */
function outputNotStorable(fence: Fence, error: unknown): BusinessError {
  const sqlstate = (error as { code: string }).code;
  return new BusinessError(
    ENGINE_ERRORS.OUTPUT_NOT_STORABLE,
    `PostgreSQL refused the output of execution ${fence.executionId} ` +
      `(SQLSTATE ${sqlstate}: ${escapeText((error as Error).message)}); it fails once`,
    { path: "$", sqlstate },
  );
}

/** Waits as the projection shows them: text PostgreSQL cannot store is written out as escapes. */
function storableWaits(waits: WaitDescriptor[]): WaitDescriptor[] {
  return findUnstorable(waits) === null ? waits : (escapeUnstorable(waits).value as WaitDescriptor[]);
}

/** The waits as given (twice: see refusalTolerant), then without their details. */
function waitVersions(waits: WaitDescriptor[]): WaitDescriptor[][] {
  const storable = storableWaits(waits);
  const reduced = storable.map((w) => ({
    kind: w.kind,
    name: w.name,
    ...(w.position !== undefined ? { position: w.position } : {}),
    ...(w.until !== undefined ? { until: w.until } : {}),
    details: { detailsDropped: "PostgreSQL refused the full wait" },
  }));
  return [storable, storable, reduced];
}

/** Columns of a step row written with its completion (SQL.completeMany, $4..$13). */
const AHEAD_COLUMNS = 10;

/** `columns` with empty columns added up to `width`: a statement needs every parameter, rows or not. */
function padded(width: number, columns: unknown[][]): unknown[][] {
  return Array.from({ length: width }, (_, i) => columns[i] ?? []);
}

/** A canonical UUID: the only shape an execution id has (executions.id is `uuid`). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RawEntry {
  position: number;
  kind: JournalEntry["kind"];
  name: string;
  state: JournalEntry["state"];
  result: unknown;
  error: FailureRecord | null;
  attempts: number;
  seq: number | null;
  cause: number | null;
}

export function toEntry(raw: RawEntry): JournalEntry {
  return {
    position: raw.position,
    kind: raw.kind,
    name: raw.name,
    state: raw.state,
    result: raw.result,
    error: raw.error,
    attempts: raw.attempts,
    seq: raw.seq,
    cause: raw.cause,
  };
}

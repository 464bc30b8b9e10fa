import type { Pool, QueryResultRow } from "pg";
import { z } from "zod";
import { BusinessError, type FailureRecord, toFailureRecord } from "../engine/errors.js";
import { TenorError } from "../errors/tenor-error.js";
import { withTransaction } from "../store/with-transaction.js";
import type { AnyEntity, EntityContext } from "./entity.js";
import type { EntityRegistry } from "./entity-registry.js";
import { KEYED_ERRORS } from "./error-codes.js";
import type { ClaimedItem } from "./keyed-lanes.js";
import type { ReplyMessage } from "./keyed-names.js";
import {
  type CommandOutcome,
  type LockedCommand,
  lockCommands,
  lockStates,
  openHandlerSavepoint,
  type Queryable,
  releaseHandlerSavepoint,
  rollbackHandlerSavepoint,
  runHandlerStatement,
  writeOutcomes,
} from "./store/pg-keyed-commands.js";

/** What one batch ended with; the worker releases `finished` and publishes their replies. */
export interface BatchResult {
  /** Commands that are done or failed (now, or already by an earlier delivery). */
  finished: (ReplyMessage & { channel: string })[];
  /** Commands left queued after a transient failure: their lease runs out and they are retried. */
  retried: string[];
  /** Commands this runner cannot handle (entity not registered here): left for another runner. */
  skipped: string[];
}

/**
 * PostgreSQL's deadlock and serialization failures: the transaction lost a conflict with another,
 * not the command. They end the whole batch (its transaction rolls back, releasing every lock it
 * took) and the worker runs it again at once; no command counts an attempt for them.
 */
export const BATCH_CONFLICT_CODES: ReadonlySet<string> = new Set(["40P01", "40001"]);

/** True for an error that is a lost conflict of the batch's transaction (BATCH_CONFLICT_CODES). */
export function isBatchConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && BATCH_CONFLICT_CODES.has(code);
}

/**
 * Runs a claimed batch in one PostgreSQL transaction: locks the commands (a redelivered command
 * that another runner is finishing waits here, then sees it done), locks and loads the keys'
 * states, runs each handler, and records every reply and state in one statement. Handlers that
 * use `ctx.query` run under a savepoint, so a refusal rolls back only their writes.
 *
 * Handlers run key by key, keys in (entity, key) order and each key's commands in seq order: a
 * handler may lock its key for the rest of the transaction (the nonce entity locks its sender),
 * and two batches that share keys must take those locks in one order. In seq order they deadlocked
 * (docs/keyed.md, "Entity commands").
 */
export async function runEntityBatch(
  pool: Pool,
  registry: EntityRegistry,
  claimed: readonly ClaimedItem[],
): Promise<BatchResult> {
  const channels = new Map(claimed.map((c) => [c.id, c.channel]));
  return withTransaction(pool, async (client) => {
    const rows = await lockCommands(
      client,
      claimed.map((c) => c.id),
    );
    const result: BatchResult = { finished: [], retried: [], skipped: [] };
    const toRun: LockedCommand[] = [];
    for (const row of rows) {
      if (row.status === "done" || row.status === "failed") {
        result.finished.push(reply(row.id, row.status, row.reply, row.error, channels));
      } else if (!registry.has(row.entity)) {
        result.skipped.push(row.id);
      } else {
        toRun.push(row);
      }
    }
    // Stable: within a key the rows keep lockCommands' seq order.
    toRun.sort((x, y) => compareText(x.entity, y.entity) || compareText(x.key, y.key));
    const states = await lockKeyStates(client, registry, toRun);
    const outcomes: CommandOutcome[] = [];
    for (const row of toRun) {
      const entity = registry.get(row.entity);
      const laneState = `${row.entity}\u0000${row.key}`;
      const outcome = await runOne(client, entity, row, states, laneState);
      outcomes.push(outcome);
      if (outcome.status === "queued") result.retried.push(row.id);
      else result.finished.push(reply(row.id, outcome.status, outcome.reply, outcome.error, channels));
    }
    await recordOutcomes(client, outcomes, states);
    return result;
  });
}

interface KeyState {
  entity: string;
  key: string;
  value: unknown;
  /** The encoded new state, once a command of this batch changed it. */
  encoded: unknown;
  changed: boolean;
}

async function lockKeyStates(
  client: Queryable,
  registry: EntityRegistry,
  rows: readonly LockedCommand[],
): Promise<Map<string, KeyState>> {
  const wanted = new Map<string, { entity: string; key: string; state: unknown }>();
  for (const row of rows) {
    const entity = registry.get(row.entity);
    if (!entity.state) continue;
    const id = `${row.entity}\u0000${row.key}`;
    if (!wanted.has(id))
      wanted.set(id, {
        entity: row.entity,
        key: row.key,
        state: z.encode(entity.state.schema, entity.state.initial()),
      });
  }
  const states = new Map<string, KeyState>();
  if (wanted.size === 0) return states;
  const locked = await lockStates(client, [...wanted.values()]);
  for (const row of locked) {
    const entity = registry.get(row.entity);
    states.set(`${row.entity}\u0000${row.key}`, {
      entity: row.entity,
      key: row.key,
      value: entity.state?.schema.parse(row.state),
      encoded: null,
      changed: false,
    });
  }
  return states;
}

async function runOne(
  client: Queryable,
  entity: AnyEntity,
  row: LockedCommand,
  states: Map<string, KeyState>,
  stateId: string,
): Promise<CommandOutcome> {
  const handler = entity.handlers[row.command];
  if (!handler) {
    return refusal(
      row,
      new BusinessError(KEYED_ERRORS.ENTITY_UNKNOWN, `entity ${entity.name} has no command ${row.command}`),
    );
  }
  const parsed = handler.input.safeParse(row.input);
  if (!parsed.success) {
    return refusal(
      row,
      new BusinessError(
        KEYED_ERRORS.COMMAND_INPUT_INVALID,
        `stored input failed the schema: ${z.prettifyError(parsed.error)}`,
      ),
    );
  }
  const state = states.get(stateId);
  let next = state?.value;
  let changed = false;
  let savepoint = false;
  const ctx: EntityContext<unknown> = {
    entity: entity.name,
    command: row.command,
    key: row.key,
    commandId: row.commandId,
    state: state?.value,
    setState(value) {
      next = value;
      changed = true;
    },
    async query<R extends QueryResultRow>(text: string, values?: unknown[]) {
      if (!savepoint) {
        await openHandlerSavepoint(client);
        savepoint = true;
      }
      return runHandlerStatement<R>(client, text, values);
    },
  };
  let output: unknown;
  let encodedState: unknown = null;
  try {
    const value = await handler.handle(ctx, parsed.data);
    output = z.encode(handler.output, value);
    if (changed && entity.state) encodedState = z.encode(entity.state.schema, next);
    if (savepoint) await releaseHandlerSavepoint(client);
  } catch (error) {
    // A lost conflict aborts the batch: rolling back to the savepoint would keep the batch's
    // other locks, and the transaction that won would go on waiting for them.
    if (isBatchConflict(error)) throw error;
    if (savepoint) await rollbackHandlerSavepoint(client);
    if (error instanceof z.ZodError) {
      return refusal(
        row,
        new BusinessError(KEYED_ERRORS.COMMAND_OUTPUT_INVALID, `reply failed its schema: ${error.message}`),
      );
    }
    if (error instanceof TenorError && !error.retryable) return refusal(row, error);
    if (row.attempts + 1 >= entity.maxAttempts) {
      return refusal(
        row,
        new BusinessError(
          KEYED_ERRORS.COMMAND_ATTEMPTS_EXHAUSTED,
          `${entity.name}.${row.command} failed ${row.attempts + 1} times: ${(error as Error)?.message ?? String(error)}`,
          { attempts: row.attempts + 1 },
          true,
        ),
        1,
      );
    }
    return {
      id: row.id,
      status: "queued",
      reply: null,
      error: toFailureRecord(error, KEYED_ERRORS.COMMAND_TRANSIENT),
      failedAttempt: 1,
    };
  }
  if (state && changed && entity.state) {
    state.value = next;
    state.encoded = encodedState;
    state.changed = true;
  }
  return { id: row.id, status: "done", reply: output, error: null, failedAttempt: 0 };
}

function refusal(row: LockedCommand, error: TenorError<string>, failedAttempt: 0 | 1 = 0): CommandOutcome {
  return {
    id: row.id,
    status: "failed",
    reply: null,
    error: toFailureRecord(error, error.code),
    failedAttempt,
  };
}

async function recordOutcomes(
  client: Queryable,
  outcomes: CommandOutcome[],
  states: Map<string, KeyState>,
): Promise<void> {
  const changed = [...states.values()].filter((s) => s.changed);
  if (outcomes.length === 0 && changed.length === 0) return;
  await writeOutcomes(
    client,
    outcomes,
    changed.map((s) => ({ entity: s.entity, key: s.key, state: s.encoded })),
  );
}

function reply(
  id: string,
  status: "done" | "failed",
  value: unknown,
  error: FailureRecord | null,
  channels: Map<string, string>,
): ReplyMessage & { channel: string } {
  return { id, status, reply: value, error, channel: channels.get(id) ?? "" };
}

/** Code-point order, the same in every process (localeCompare depends on the locale). */
function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { Pool } from "pg";
import { z } from "zod";
import { BusinessError, type FailureRecord } from "../engine/errors.js";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import { KEYED_SPACES } from "../transport/queue-names.js";
import type { AnyEntity, CommandInput, CommandOutput } from "./entity.js";
import type { EntityRegistry } from "./entity-registry.js";
import { KEYED_ERRORS } from "./error-codes.js";
import { KeyedLanes, type LaneItem } from "./keyed-lanes.js";
import { entityLane, type ReplyMessage, replyChannel } from "./keyed-names.js";
import { type KeyBound, queuedBefore } from "./queued-before.js";
import { hashCommand } from "./request-hash.js";
import {
  findCommands,
  finishedCommands,
  insertCommands,
  type KeyedCommand,
  type NewKeyedCommand,
} from "./store/pg-keyed-commands.js";

export interface SendOptions {
  /** Idempotency id: sending again with it returns the first send's reply. Default: a new UUID. */
  commandId?: string;
  /** How long to wait for the reply, in ms. Default 30,000. The command is kept either way. */
  timeoutMs?: number;
}

export interface EntityClientOptions {
  pool: Pool;
  /** Producer connection; the client opens one more (a duplicate) to subscribe to its replies. */
  redis: Redis;
  prefix: string;
  registry: EntityRegistry;
  logger: Logger;
  /** How often waiting sends read PostgreSQL for replies whose pub/sub message was lost, in ms. Default 1,000. */
  pollMs?: number;
}

interface PendingSend {
  entity: AnyEntity;
  command: string;
  commandId: string;
  key: string;
  input: unknown;
  requestHash: string;
  accept: (row: KeyedCommand) => void;
  refuse: (error: unknown) => void;
}

interface Waiter {
  settle: (message: ReplyMessage) => void;
  since: number;
}

/** Sends per PostgreSQL batch: one multi-row insert and one Lua call carry them all. */
const MAX_BATCH = 500;

/**
 * Sends commands to keyed entities and awaits their typed replies (docs/keyed.md, "Entity commands").
 * A command is committed to PostgreSQL before Redis hears of it, so a crash in between leaves work
 * the repair finds. Sends issued in one event-loop tick share one insert and one Lua call.
 */
export class EntityClient {
  private readonly lanes: KeyedLanes;
  private readonly clientId = randomUUID();
  private readonly channel: string;
  private readonly subscriber: Redis;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private batch: PendingSend[] = [];
  private flushScheduled = false;
  /**
   * Batches are inserted one after the other and enqueued one after the other, so the order of
   * `send` calls is the arrival order of one client's commands (PostgreSQL seq and Redis alike),
   * while one batch's enqueue overlaps the next one's insert.
   */
  private insertTail: Promise<unknown> = Promise.resolve();
  private enqueueTail: Promise<unknown> = Promise.resolve();
  private readonly poller: NodeJS.Timeout;
  private subscribed: Promise<unknown>;
  private closed = false;

  constructor(private readonly options: EntityClientOptions) {
    this.lanes = new KeyedLanes(options.redis, options.prefix, KEYED_SPACES.entities, true);
    this.channel = replyChannel(options.prefix, this.clientId);
    this.subscriber = options.redis.duplicate();
    this.subscriber.on("error", () => undefined);
    this.subscriber.on("message", (_channel: string, text: string) => this.onReplies(text));
    this.subscribed = this.subscriber.subscribe(this.channel).catch((error: Error) => {
      options.logger.warn("keyed reply channel subscription failed; replies arrive by polling", {
        error: error.message,
      });
    });
    const pollMs = options.pollMs ?? 1_000;
    this.poller = setInterval(() => void this.pollReplies(pollMs), pollMs);
    this.poller.unref();
  }

  /**
   * Sends `command` to `entity` and resolves with its typed reply. Refused commands reject with
   * the handler's error (same code); COMMAND_REPLY_TIMEOUT means the command is still queued or
   * running, and sending again with the same `commandId` waits for the same reply.
   */
  async send<E extends AnyEntity, C extends keyof E["handlers"] & string>(
    entity: E,
    command: C,
    input: CommandInput<E, C>,
    options: SendOptions = {},
  ): Promise<CommandOutput<E, C>> {
    const { registered, row } = await this.submit(entity, command, input, options.commandId);
    const message = await this.awaitRow(row, options.timeoutMs ?? 30_000);
    return decodeReply(registered, command, message) as CommandOutput<E, C>;
  }

  /**
   * Sends `command` without waiting for its reply: resolves once the command is committed, with
   * its reply when it has one already (a repeated post of a finished command), else `null`. When
   * the reply reaches this client later (its reply channel, or the poll) within `watchMs`
   * (default 30,000), `onFinished` runs once with the command's final status and its stored reply
   * (encoded; none for a refused command). Whoever needs the reply later reads it with `reply`.
   */
  async post<E extends AnyEntity, C extends keyof E["handlers"] & string>(
    entity: E,
    command: C,
    input: CommandInput<E, C>,
    options: {
      commandId: string;
      watchMs?: number;
      onFinished?: (finished: Pick<ReplyMessage, "status" | "reply">) => void;
    },
  ): Promise<{ reply: CommandOutput<E, C> } | null> {
    const { registered, row } = await this.submit(entity, command, input, options.commandId);
    if (row.status === "done" || row.status === "failed") {
      const message: ReplyMessage = { id: row.id, status: row.status, reply: row.reply, error: row.error };
      return { reply: decodeReply(registered, command, message) as CommandOutput<E, C> };
    }
    const { onFinished } = options;
    this.awaitRow(row, options.watchMs ?? 30_000, true).then(
      (message) => onFinished?.({ status: message.status, reply: message.reply }),
      () => undefined,
    );
    return null;
  }

  /**
   * The stored reply of command `commandId` of `entity`, read from PostgreSQL: `null` while it is
   * queued (or unknown); a refused command rejects with the handler's error, as `send` does.
   */
  async reply<E extends AnyEntity, C extends keyof E["handlers"] & string>(
    entity: E,
    command: C,
    commandId: string,
  ): Promise<{ reply: CommandOutput<E, C> } | null> {
    const registered = this.options.registry.get(entity.name);
    const [row] = await findCommands(this.options.pool, [{ entity: entity.name, commandId }]);
    if (row?.status !== "done" && row?.status !== "failed") return null;
    const message: ReplyMessage = { id: row.id, status: row.status, reply: row.reply, error: row.error };
    return { reply: decodeReply(registered, command, message) as CommandOutput<E, C> };
  }

  /** Validates, encodes and inserts one command (batched per tick); resolves with its row. */
  private async submit<E extends AnyEntity, C extends keyof E["handlers"] & string>(
    entity: E,
    command: C,
    input: CommandInput<E, C>,
    commandId: string = randomUUID(),
  ): Promise<{ registered: AnyEntity; row: KeyedCommand }> {
    const registered = this.options.registry.get(entity.name);
    const handler = registered.handlers[command];
    if (!handler) {
      throw new TenorError(KEYED_ERRORS.ENTITY_UNKNOWN, `entity ${entity.name} has no command ${command}`, {
        details: { entity: entity.name, command },
      });
    }
    let encoded: unknown;
    try {
      encoded = z.encode(handler.input, input);
    } catch (error) {
      throw new TenorError(
        KEYED_ERRORS.COMMAND_INPUT_INVALID,
        `input of ${entity.name}.${command} is invalid: ${(error as Error).message}`,
        { details: { entity: entity.name, command } },
      );
    }
    await this.subscribed;
    const row = await new Promise<KeyedCommand>((accept, refuse) => {
      this.batch.push({
        entity: registered,
        command,
        commandId,
        key: registered.key(input, command),
        input: encoded,
        requestHash: hashCommand(command, encoded),
        accept,
        refuse,
      });
      this.scheduleFlush();
    });
    return { registered, row };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poller);
    this.subscriber.disconnect();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      while (this.batch.length > 0) void this.flush(this.batch.splice(0, MAX_BATCH));
    });
  }

  private async flush(sends: PendingSend[]): Promise<void> {
    let rows: Map<string, KeyedCommand>;
    const inserted = this.insertTail.then(() => this.insert(sends));
    this.insertTail = inserted.catch(() => undefined);
    try {
      rows = await inserted;
    } catch (error) {
      for (const send of sends) send.refuse(error);
      return;
    }
    const items: LaneItem[] = [];
    const accepted: [PendingSend, KeyedCommand][] = [];
    for (const send of sends) {
      const row = rows.get(`${send.entity.name}\u0000${send.commandId}`);
      if (!row) {
        send.refuse(new Error(`command ${send.commandId} neither inserted nor found`));
      } else if (row.requestHash !== send.requestHash || row.command !== send.command) {
        send.refuse(
          new TenorError(
            KEYED_ERRORS.COMMAND_ID_REUSED,
            `command id ${JSON.stringify(send.commandId)} of ${send.entity.name} was used for another command or input`,
            { details: { entity: send.entity.name, commandId: send.commandId, id: row.id } },
          ),
        );
      } else {
        accepted.push([send, row]);
        if (row.status === "queued") {
          // The waiter exists before Redis hears of the command, so its reply cannot be missed.
          items.push({
            id: row.id,
            lane: entityLane(row.entity, row.key),
            seq: row.seq,
            limit: send.entity.limit,
            channel: this.channel,
          });
        }
      }
    }
    for (const [send, row] of accepted) send.accept(row);
    const own = new Set(items.map((item) => item.id));
    const gaps = await this.gapsBefore(accepted.map(([, row]) => row));
    items.unshift(...gaps.filter((gap) => !own.has(gap.id)));
    const enqueued = this.enqueueTail.then(() => (items.length > 0 ? this.lanes.enqueue(items) : null));
    this.enqueueTail = enqueued.catch(() => undefined);
    try {
      const lost = (await enqueued)?.lost ?? false;
      if (lost)
        this.options.logger.warn("keyed state lost in Redis; the repair will enqueue these commands", {
          commands: items.length,
        });
    } catch (error) {
      // PostgreSQL has the commands: the repair enqueues them and the reply poll finds the result.
      this.options.logger.warn("could not enqueue keyed commands; the repair will", {
        error: (error as Error).message,
      });
    }
  }

  /**
   * Queued commands of the same keys, committed before these (lower seq) by a sender that died
   * before enqueueing them: enqueued together, they keep their place ahead of these. A failed
   * read is logged; the repair fills such a gap within its grace period (docs/keyed.md, "Order").
   */
  private async gapsBefore(rows: readonly KeyedCommand[]): Promise<LaneItem[]> {
    const highest = new Map<string, KeyBound>();
    for (const row of rows) {
      if (row.status !== "queued") continue;
      const lane = entityLane(row.entity, row.key);
      const seq = BigInt(row.seq);
      const current = highest.get(lane);
      if (!current || seq > current.seq) highest.set(lane, { entity: row.entity, key: row.key, seq });
    }
    try {
      return await queuedBefore(this.options.pool, [...highest.values()], entityLane);
    } catch (error) {
      this.options.logger.warn("could not read earlier commands of these keys; the repair will", {
        error: (error as Error).message,
      });
      return [];
    }
  }

  private async insert(sends: PendingSend[]): Promise<Map<string, KeyedCommand>> {
    const commands: NewKeyedCommand[] = [];
    const seen = new Set<string>();
    for (const send of sends) {
      const identity = `${send.entity.name}\u0000${send.commandId}`;
      if (seen.has(identity)) continue;
      seen.add(identity);
      commands.push({
        id: randomUUID(),
        entity: send.entity.name,
        command: send.command,
        commandId: send.commandId,
        key: send.key,
        keyLimit: send.entity.limit,
        requestHash: send.requestHash,
        input: send.input,
      });
    }
    const byIdentity = new Map<string, KeyedCommand>();
    for (const row of await insertCommands(this.options.pool, commands))
      byIdentity.set(`${row.entity}\u0000${row.commandId}`, row);
    const missing = sends.filter((s) => !byIdentity.has(`${s.entity.name}\u0000${s.commandId}`));
    if (missing.length > 0) {
      const existing = await findCommands(
        this.options.pool,
        missing.map((s) => ({ entity: s.entity.name, commandId: s.commandId })),
      );
      for (const row of existing) byIdentity.set(`${row.entity}\u0000${row.commandId}`, row);
    }
    return byIdentity;
  }

  /** `background`: nobody awaits the reply, so its timer must not keep the process alive. */
  private awaitRow(row: KeyedCommand, timeoutMs: number, background = false): Promise<ReplyMessage> {
    if (row.status === "done" || row.status === "failed")
      return Promise.resolve({ id: row.id, status: row.status, reply: row.reply, error: row.error });
    return new Promise<ReplyMessage>((resolve, reject) => {
      let set = this.waiters.get(row.id);
      if (!set) {
        set = new Set();
        this.waiters.set(row.id, set);
      }
      const waiter: Waiter = {
        since: Date.now(),
        settle: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
      };
      set.add(waiter);
      const timer = setTimeout(() => {
        const current = this.waiters.get(row.id);
        current?.delete(waiter);
        if (current?.size === 0) this.waiters.delete(row.id);
        reject(
          new TenorError(
            KEYED_ERRORS.COMMAND_REPLY_TIMEOUT,
            `no reply to ${row.entity}.${row.command} (command id ${row.commandId}) within ${timeoutMs} ms; it stays queued`,
            { retryable: true, details: { entity: row.entity, commandId: row.commandId, id: row.id } },
          ),
        );
      }, timeoutMs);
      if (background) timer.unref();
    });
  }

  private onReplies(text: string): void {
    let messages: ReplyMessage[];
    try {
      messages = JSON.parse(text) as ReplyMessage[];
    } catch {
      return;
    }
    for (const message of messages) this.settle(message);
  }

  private settle(message: ReplyMessage): void {
    const set = this.waiters.get(message.id);
    if (!set) return;
    this.waiters.delete(message.id);
    for (const waiter of set) waiter.settle(message);
  }

  /** The wake may be lost (Redis restart, a runner dying after commit): read the truth. */
  private async pollReplies(ageMs: number): Promise<void> {
    if (this.closed || this.waiters.size === 0) return;
    const now = Date.now();
    const ids = [...this.waiters.entries()]
      .filter(([, set]) => [...set].some((w) => now - w.since >= ageMs))
      .map(([id]) => id)
      .slice(0, 5_000);
    if (ids.length === 0) return;
    try {
      for (const row of await finishedCommands(this.options.pool, ids)) this.settle(row);
    } catch (error) {
      this.options.logger.warn("keyed reply poll failed; the next one retries", {
        error: (error as Error).message,
      });
    }
  }
}

function decodeReply(entity: AnyEntity, command: string, message: ReplyMessage): unknown {
  if (message.status === "failed") {
    const error = message.error ?? {
      code: KEYED_ERRORS.COMMAND_ATTEMPTS_EXHAUSTED,
      message: "command failed",
      retryable: false,
      details: {},
    };
    throw BusinessError.fromRecord(error as FailureRecord);
  }
  const handler = entity.handlers[command];
  return handler.output.parse(message.reply);
}

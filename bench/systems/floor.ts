import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type pg from "pg";
import { JOURNAL_GROUP_COMMIT } from "../../src/store/journal-batcher.js";
import { expectResult } from "../lib/checked-result.js";
import { nowMs } from "../lib/concurrency.js";
import { type FlushOn, TickGroup } from "../lib/tick-group.js";

export const FLOOR_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS bench_checkpoints (
    chain_id uuid NOT NULL, position int NOT NULL, result jsonb, at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, position))`;

/** Moves a chain's marker and pushes its step, as a queue transition would: one round trip. */
const STEP_SCRIPT = `
  redis.call('HSET', KEYS[1], 'step', ARGV[1])
  redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])
  return 1`;

/** One checkpoint row: a step's result (the count of steps done), or a start's empty row (position -1). */
interface Checkpoint {
  chainId: string;
  position: number;
  result: string;
}

/**
 * The durable work of the bench's no-op chain with bare drivers and nothing else: per step one
 * Redis Lua call (the wake/queue move a step costs at minimum) and then one committed
 * PostgreSQL write of its checkpoint, the next step only after the last one committed; a chain's
 * client then reads its last checkpoint back and checks it. Subclasses decide how the calls and
 * statements are sent: {@link FloorSystem} groups them across chains, FloorSerialSystem sends
 * each on its own.
 */
export abstract class FloorProgram {
  protected readonly sha: Promise<string>;
  protected readonly stepsKey: string;

  constructor(
    protected readonly pool: pg.Pool,
    protected readonly redis: Redis,
    protected readonly prefix: string,
  ) {
    this.sha = redis.script("LOAD", STEP_SCRIPT) as Promise<string>;
    this.stepsKey = `${prefix}:steps`;
  }

  async prepare(): Promise<void> {
    await this.pool.query(FLOOR_TABLE_SQL);
  }

  /** One durable step: the Lua call, then the committed write of its checkpoint. */
  async step(chainId: string, position: number): Promise<void> {
    await this.call(chainId, position);
    await this.write({ chainId, position, result: String(position + 1) });
  }

  /** A start: the execution's row committed, then one Lua call to enqueue it. */
  async start(): Promise<void> {
    const chainId = randomUUID();
    await this.write({ chainId, position: -1, result: "{}" });
    await this.call(chainId, 0);
  }

  /**
   * Runs one chain of `steps` steps as its client sees it: from the first step until the last
   * checkpoint is committed, read back and checked. Returns the duration in ms.
   * @throws Error when the checkpoint read back is not the chain's result.
   */
  async chain(steps: number): Promise<number> {
    const chainId = randomUUID();
    const started = nowMs();
    for (let i = 0; i < steps; i++) await this.step(chainId, i);
    expectResult(`floor chain ${chainId}`, await this.read(chainId, steps - 1), steps);
    return nowMs() - started;
  }

  protected chainKey(chainId: string): string {
    return `${this.prefix}:chain:${chainId}`;
  }

  /** The step's Lua call. */
  protected abstract call(chainId: string, position: number): Promise<void>;
  /** Commits one checkpoint row. */
  protected abstract write(row: Checkpoint): Promise<void>;
  /** Reads a committed checkpoint's result (undefined when there is none). */
  protected abstract read(chainId: string, position: number): Promise<unknown>;
}

/**
 * How {@link FloorSystem} sends its Redis calls: one pipeline per group, each on its own, or a
 * call at once while no pipeline is out and the calls made meanwhile as one pipeline.
 */
export type FloorRedisCalls = "pipelined" | "per-step" | "pipelined-when-busy";

export interface FloorOptions {
  /**
   * When a group leaves. Default `immediate`, the next turn of the event loop, as Tenor's
   * batchers: measured with bench/probes/floor-variants.ts, it moves as many steps as any other
   * moment, and a lone chain among other systems' chains (W1) then costs what floor-serial does.
   */
  flushOn?: FlushOn;
  /** Default `pipelined`. */
  redisCalls?: FloorRedisCalls;
  /** Statements (and pipelines) in flight at once; default the journal's, `JOURNAL_GROUP_COMMIT.maxInFlight`. */
  maxInFlight?: number;
}

const INSERT_ONE = "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, $2, $3::jsonb)";
const INSERT_MANY = `INSERT INTO bench_checkpoints (chain_id, position, result)
  SELECT * FROM unnest($1::uuid[], $2::int[], $3::jsonb[])`;
const READ_ONE =
  "SELECT chain_id, position, result FROM bench_checkpoints WHERE chain_id = $1 AND position = $2";
const READ_MANY = `SELECT c.chain_id, c.position, c.result
  FROM bench_checkpoints c JOIN unnest($1::uuid[], $2::int[]) AS k (chain_id, position) USING (chain_id, position)`;

/**
 * The floor: {@link FloorProgram}'s work with everything that is ready at the same moment, across
 * all chains in flight, sent together, as Tenor's journal does with its appends (the same limits,
 * `JOURNAL_GROUP_COMMIT`): the checkpoints as one multi-row INSERT and one commit, the read-backs
 * as one SELECT, the Lua calls as one pipeline; while `maxInFlight` writes run, the next group
 * gathers. A chain still waits for its own commit before its next step; what grouping shares is
 * the round trip and the commit's flush, and that sharing is all a program can save here without
 * doing less work per step.
 */
export class FloorSystem extends FloorProgram {
  private readonly writes: TickGroup<Checkpoint, undefined>;
  private readonly reads: TickGroup<{ chainId: string; position: number }, unknown>;
  private readonly calls: TickGroup<{ chainId: string; position: number }, undefined> | null;

  constructor(pool: pg.Pool, redis: Redis, prefix: string, options: FloorOptions = {}) {
    super(pool, redis, prefix);
    const group = {
      flushOn: options.flushOn ?? "immediate",
      maxBatch: JOURNAL_GROUP_COMMIT.maxBatch,
      maxInFlight: options.maxInFlight ?? JOURNAL_GROUP_COMMIT.maxInFlight,
    };
    this.writes = new TickGroup((rows) => this.insert(rows), group);
    this.reads = new TickGroup((keys) => this.select(keys), group);
    const redisCalls = options.redisCalls ?? "pipelined";
    this.calls =
      redisCalls === "per-step"
        ? null
        : new TickGroup(
            (items) => this.pipeline(items),
            redisCalls === "pipelined" ? group : { ...group, flushOn: "at-once-when-idle" },
          );
  }

  protected async call(chainId: string, position: number): Promise<void> {
    if (this.calls) {
      await this.calls.submit({ chainId, position });
      return;
    }
    await this.redis.evalsha(await this.sha, 2, this.chainKey(chainId), this.stepsKey, String(position));
  }

  protected async write(row: Checkpoint): Promise<void> {
    await this.writes.submit(row);
  }

  protected read(chainId: string, position: number): Promise<unknown> {
    return this.reads.submit({ chainId, position });
  }

  /** One statement and one commit for the group; named, so it is planned once per connection. */
  private async insert(rows: readonly Checkpoint[]): Promise<undefined[]> {
    const [one] = rows;
    if (rows.length === 1 && one) {
      await this.pool.query({
        name: "bench_floor_checkpoint",
        text: INSERT_ONE,
        values: [one.chainId, one.position, one.result],
      });
    } else {
      await this.pool.query({
        name: "bench_floor_checkpoints",
        text: INSERT_MANY,
        values: [rows.map((r) => r.chainId), rows.map((r) => r.position), rows.map((r) => r.result)],
      });
    }
    return rows.map(() => undefined);
  }

  private async select(keys: readonly { chainId: string; position: number }[]): Promise<unknown[]> {
    const [one] = keys;
    const { rows } = await this.pool.query<{ chain_id: string; position: number; result: unknown }>(
      keys.length === 1 && one
        ? { name: "bench_floor_read", text: READ_ONE, values: [one.chainId, one.position] }
        : {
            name: "bench_floor_reads",
            text: READ_MANY,
            values: [keys.map((k) => k.chainId), keys.map((k) => k.position)],
          },
    );
    const byKey = new Map(rows.map((r) => [`${r.chain_id}/${r.position}`, r.result]));
    return keys.map((k) => byKey.get(`${k.chainId}/${k.position}`));
  }

  /** The group's Lua calls in one pipeline; a lone call goes as itself, without the pipeline's own work. */
  private async pipeline(items: readonly { chainId: string; position: number }[]): Promise<undefined[]> {
    const sha = await this.sha;
    const [one] = items;
    if (items.length === 1 && one) {
      await this.redis.evalsha(sha, 2, this.chainKey(one.chainId), this.stepsKey, String(one.position));
      return [undefined];
    }
    const pipeline = this.redis.pipeline();
    for (const { chainId, position } of items)
      pipeline.evalsha(sha, 2, this.chainKey(chainId), this.stepsKey, String(position));
    const replies = (await pipeline.exec()) ?? [];
    return items.map((_, i) => {
      const error = replies[i]?.[0] ?? (replies[i] ? null : new Error("the pipeline gave no reply"));
      if (error) throw error;
      return undefined;
    });
  }
}

/**
 * The floor of a fan-out: each of `children` children is created (row + Lua call) and runs one
 * step (Lua call + insert), all at once, then the parent records one step. Returns the duration in ms.
 */
export async function floorFanout(floor: FloorProgram, children: number): Promise<number> {
  const started = nowMs();
  const parent = randomUUID();
  await Promise.all(
    Array.from({ length: children }, async (_, i) => {
      await floor.start();
      await floor.step(randomUUID(), i);
    }),
  );
  await floor.step(parent, 0);
  return nowMs() - started;
}

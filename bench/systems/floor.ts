import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type pg from "pg";
import { expectResult } from "../lib/checked-result.js";
import { nowMs } from "../lib/concurrency.js";

/**
 * The physical floor of one durable step: one Redis Lua call (the doorbell/queue move a step
 * costs at minimum) and one PostgreSQL insert committed on its own (the checkpoint), with bare
 * drivers and nothing else. No engine can do a durable step for less on this machine.
 */
export const FLOOR_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS bench_checkpoints (
    chain_id uuid NOT NULL, position int NOT NULL, result jsonb, at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, position))`;

/** Moves a chain's marker and pushes its step, as a queue transition would: one round trip. */
const STEP_SCRIPT = `
  redis.call('HSET', KEYS[1], 'step', ARGV[1])
  redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])
  return 1`;

export class FloorSystem {
  private readonly sha: Promise<string>;

  constructor(
    private readonly pool: pg.Pool,
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.sha = redis.script("LOAD", STEP_SCRIPT) as Promise<string>;
  }

  async prepare(): Promise<void> {
    await this.pool.query(FLOOR_TABLE_SQL);
  }

  /** One durable step: the Lua call, then the committed insert. */
  async step(chainId: string, position: number): Promise<void> {
    await this.redis.evalsha(
      await this.sha,
      2,
      `${this.prefix}:chain:${chainId}`,
      `${this.prefix}:steps`,
      String(position),
    );
    await this.pool.query({
      name: "bench_floor_checkpoint",
      text: "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, $2, $3::jsonb)",
      values: [chainId, position, String(position + 1)],
    });
  }

  /**
   * Runs one chain of `steps` steps as its client sees it: from the first step until the last
   * checkpoint (the count of steps done) is committed, read back and checked. Returns the
   * duration in ms.
   * @throws Error when the checkpoint read back is not the chain's result.
   */
  async chain(steps: number): Promise<number> {
    const id = randomUUID();
    const started = nowMs();
    for (let i = 0; i < steps; i++) await this.step(id, i);
    const { rows } = await this.pool.query<{ result: unknown }>({
      name: "bench_floor_read",
      text: "SELECT result FROM bench_checkpoints WHERE chain_id = $1 AND position = $2",
      values: [id, steps - 1],
    });
    expectResult(`floor chain ${id}`, rows[0]?.result, steps);
    return nowMs() - started;
  }

  /** A start at the floor: the execution row insert and one Redis call to enqueue it. */
  async start(): Promise<void> {
    const id = randomUUID();
    await this.pool.query({
      name: "bench_floor_start",
      text: "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, -1, '{}'::jsonb)",
      values: [id],
    });
    await this.redis.evalsha(await this.sha, 2, `${this.prefix}:chain:${id}`, `${this.prefix}:steps`, "0");
  }
}

/**
 * The floor of a fan-out: each of `children` children is created (row + Lua call) and runs one
 * step (Lua call + insert), all at once, then the parent records one step. Returns the duration in ms.
 */
export async function floorFanout(floor: FloorSystem, children: number): Promise<number> {
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

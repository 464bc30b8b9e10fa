import { randomUUID } from "node:crypto";
import { FlowProducer, type Job, Queue, QueueEvents, Worker } from "bullmq";
import type pg from "pg";
import { expectResult } from "../lib/checked-result.js";
import { nowMs } from "../lib/concurrency.js";
import { FLOOR_TABLE_SQL } from "./floor.js";

interface ChainJob {
  chainId: string;
  step: number;
  total: number;
}

/** Same worker concurrency as Tenor's default `durable.runnerConcurrency`. */
const WORKER_CONCURRENCY = 100;

/**
 * The plain BullMQ peer: what a team would write without an engine. One job per step; the job
 * commits a checkpoint row (the count of steps done) and then adds the next step's job. Locks are
 * BullMQ's defaults. A chain's client learns that its last job finished from the worker's
 * `completed` event (in this process: no notification is cheaper), then reads the last checkpoint
 * back from PostgreSQL and checks it.
 */
export class BullmqChainSystem {
  private readonly queue: Queue<ChainJob>;
  private readonly worker: Worker<ChainJob>;
  private readonly flowQueue: Queue;
  private readonly flowWorker: Worker;
  private readonly flows: FlowProducer;
  private flowEvents: QueueEvents | null = null;
  private readonly chainDone = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();

  constructor(
    private readonly pool: pg.Pool,
    redisUrl: string,
    prefix: string,
  ) {
    const connection = { url: redisUrl, maxRetriesPerRequest: null } as never;
    this.queue = new Queue<ChainJob>("chain", { connection, prefix });
    this.worker = new Worker<ChainJob>("chain", (job) => this.processStep(job), {
      connection,
      prefix,
      concurrency: WORKER_CONCURRENCY,
      removeOnComplete: { count: 0 },
    });
    this.worker.on("completed", (job) => {
      const { chainId, step, total } = job.data;
      if (step + 1 === total) this.settleChain(chainId, null);
    });
    this.worker.on("failed", (job, error) => {
      if (job) this.settleChain(job.data.chainId, error);
    });
    this.flowQueue = new Queue("fanout", { connection, prefix });
    this.flowWorker = new Worker("fanout", (job) => this.processFlowJob(job), {
      connection,
      prefix,
      concurrency: WORKER_CONCURRENCY,
    });
    this.flows = new FlowProducer({ connection, prefix });
    this.connection = connection;
    this.prefix = prefix;
  }

  private readonly connection: never;
  private readonly prefix: string;

  async prepare(): Promise<void> {
    await this.pool.query(FLOOR_TABLE_SQL);
    await Promise.all([this.worker.waitUntilReady(), this.flowWorker.waitUntilReady()]);
  }

  private async processStep(job: Job<ChainJob>): Promise<void> {
    const { chainId, step, total } = job.data;
    await this.pool.query({
      name: "bench_bullmq_checkpoint",
      text: "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, $2, $3::jsonb)",
      values: [chainId, step, String(step + 1)],
    });
    if (step + 1 < total)
      await this.queue.add("step", { chainId, step: step + 1, total }, { removeOnComplete: true });
  }

  private settleChain(chainId: string, error: Error | null): void {
    const waiter = this.chainDone.get(chainId);
    this.chainDone.delete(chainId);
    if (error) waiter?.reject(error);
    else waiter?.resolve();
  }

  /**
   * Runs one chain as its client sees it: from the first add until its last job finished and the
   * client read the last checkpoint back and checked it. Resolves with the duration in ms.
   * @throws Error when a step's job failed or the checkpoint read back is not the chain's result.
   */
  async chain(steps: number): Promise<number> {
    const chainId = randomUUID();
    const started = nowMs();
    const done = new Promise<void>((resolve, reject) => this.chainDone.set(chainId, { resolve, reject }));
    await this.queue.add("step", { chainId, step: 0, total: steps }, { removeOnComplete: true });
    await done;
    const { rows } = await this.pool.query<{ result: unknown }>({
      name: "bench_bullmq_read",
      text: "SELECT result FROM bench_checkpoints WHERE chain_id = $1 AND position = $2",
      values: [chainId, steps - 1],
    });
    expectResult(`bullmq chain ${chainId}`, rows[0]?.result, steps);
    return nowMs() - started;
  }

  /** A start: the row insert plus one `Queue.add`. */
  async start(): Promise<void> {
    const chainId = randomUUID();
    await this.pool.query({
      name: "bench_bullmq_start",
      text: "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, -1, '{}'::jsonb)",
      values: [chainId],
    });
    await this.flowQueue.add("start-only", { chainId }, { delay: 3_600_000, removeOnComplete: true });
  }

  private async processFlowJob(job: Job): Promise<unknown> {
    const id = randomUUID();
    await this.pool.query({
      name: "bench_bullmq_flow_checkpoint",
      text: "INSERT INTO bench_checkpoints (chain_id, position, result) VALUES ($1, 0, $2::jsonb)",
      values: [id, JSON.stringify(job.data ?? null)],
    });
    if (job.name === "parent") return Object.keys(await job.getChildrenValues()).length;
    return (job.data as { i: number }).i;
  }

  /** A BullMQ flow: a parent job with `children` child jobs; resolves with the duration in ms. */
  async fanout(children: number): Promise<number> {
    if (!this.flowEvents) {
      this.flowEvents = new QueueEvents("fanout", { connection: this.connection, prefix: this.prefix });
      await this.flowEvents.waitUntilReady();
    }
    const started = nowMs();
    const node = await this.flows.add({
      name: "parent",
      queueName: "fanout",
      data: {},
      children: Array.from({ length: children }, (_, i) => ({
        name: "child",
        queueName: "fanout",
        data: { i },
      })),
    });
    await node.job.waitUntilFinished(this.flowEvents, 120_000);
    return nowMs() - started;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.worker.close(), this.flowWorker.close()]);
    await Promise.allSettled([
      this.queue.close(),
      this.flowQueue.close(),
      this.flows.close(),
      this.flowEvents?.close() ?? Promise.resolve(),
    ]);
  }
}

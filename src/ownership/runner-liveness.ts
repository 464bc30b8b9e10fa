import { randomInt, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import type { TenorConfig } from "../config/schema.js";
import { reservedSessionUrl } from "../config/session-url.js";
import type { Logger } from "../observability/logger.js";
import {
  RunnerDirectory,
  type RunnerRegistration,
  type RunnerWorker,
  reclaimDeadWorkerJobs,
} from "../runtime/dead-runner-jobs.js";
import { openReservedConnection, type ReservedConnection } from "./reserved-connection.js";
import { heldRunnerKeys, tryLockRunnerKey, unlockRunnerKey } from "./store/pg-runner-liveness.js";

export interface RunnerLivenessOptions {
  connectionString: string;
  redis: Redis;
  prefix: string;
  /** This runner's BullMQ workers (RunnerEngine.workers). */
  workers: readonly RunnerWorker[];
  /** How often peers are checked, in milliseconds (`durable.liveness.checkIntervalMs`). */
  checkIntervalMs: number;
  /** How long the server keeps a silent client's session, in ms (`durable.sharding.livenessWindowMs`). */
  deadPeerMs: number;
  logger: Logger;
  /** Default: `<host>:<pid>:<random>`, unique per process start. */
  runnerId?: string;
  /** Told which jobs were moved back from a dead runner, per queue (the takeover log line). */
  onTakeover?: (deadRunner: string, moved: { queue: string; jobIds: string[] }[]) => void | Promise<void>;
}

/** Counters a test or an operator reads. */
export interface RunnerLivenessStats {
  checks: number;
  /** Dead runners whose jobs this runner moved back to wait. */
  takeovers: number;
  jobsMoved: number;
  sessionFailures: number;
}

/**
 * A runner's liveness is its PostgreSQL session: it holds a session advisory lock on a reserved
 * connection, which the server frees the moment the process dies (its socket closes; a vanished
 * peer within `deadPeerMs` through TCP keepalives). Every `checkIntervalMs` each runner compares
 * the runners registered in Redis with the locks held in PostgreSQL; a registered runner whose
 * lock is gone is dead, and its active jobs go back to wait at once for a live runner to take.
 *
 * A stopped but alive runner (SIGSTOP, a long GC pause) keeps its session and so its lock: it is
 * not declared dead here, its jobs pass to another runner by lock expiry as before, and its writes
 * after it resumes are refused by the turn fence (docs/engine.md, "Fencing"). A runner whose
 * session dies while the process lives is taken over too; fencing keeps that safe, and it locks
 * and registers itself again at its next check.
 */
export class RunnerLiveness {
  readonly runnerId: string;
  readonly stats: RunnerLivenessStats = { checks: 0, takeovers: 0, jobsMoved: 0, sessionFailures: 0 };
  private readonly directory: RunnerDirectory;
  private readonly logger: Logger;
  private session: ReservedConnection | undefined;
  /** The liveness key; kept across sessions so a re-locked runner reads as the same runner. */
  private key = randomInt(1, 2 ** 31 - 1);
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: RunnerLivenessOptions) {
    this.runnerId = options.runnerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.directory = new RunnerDirectory(options.redis, options.prefix);
    this.logger = options.logger.child({ component: "ownership" });
  }

  /** Locks, registers and checks once (so a runner is known before it takes work), then every interval. */
  async start(): Promise<void> {
    this.cycle = this.check();
    await this.cycle;
    this.scheduleNext();
  }

  /**
   * Unregisters first, then frees the lock: the other way round, a peer could see this runner
   * registered without a lock and move jobs it is still finishing. Call after the workers closed.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.cycle;
    await this.directory.forget(this.runnerId).catch(() => undefined);
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    try {
      await unlockRunnerKey(session.client, this.key);
      await session.client.end();
    } catch {
      session.destroy();
    }
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.cycle = this.check().finally(() => this.scheduleNext());
    }, this.options.checkIntervalMs);
    this.timer.unref();
  }

  /**
   * One check; never throws (a failed session is rebuilt at the next check). Bounded: a check
   * that hangs (PostgreSQL unreachable) tears its session down at the deadline.
   */
  private async check(): Promise<void> {
    const deadlineMs = Math.max(1_000, this.options.checkIntervalMs * 4);
    const deadline = setTimeout(() => this.session?.destroy(), deadlineMs);
    try {
      await this.checkOnce();
    } finally {
      clearTimeout(deadline);
    }
  }

  private async checkOnce(): Promise<void> {
    try {
      const session = await this.lockedSession();
      // Registered first, then the locks: a runner registers only once it holds its lock, so an
      // entry read here whose lock is missing from the later read belongs to a dead session.
      const registered = await this.directory.list();
      const live = await heldRunnerKeys(session.client);
      if (!live.has(this.key)) throw new Error("this runner's liveness lock is no longer held");
      const own = registered.get(this.runnerId);
      if (!own || own.key !== this.key) await this.directory.register(this.runnerId, this.registration());
      for (const [runnerId, registration] of registered) {
        if (runnerId === this.runnerId || live.has(registration.key)) continue;
        await this.takeOver(runnerId, registration);
      }
      this.stats.checks++;
    } catch (error) {
      this.stats.sessionFailures++;
      this.logger.warn("runner liveness check failed; the session is rebuilt at the next check", {
        error: (error as Error).message,
      });
      this.session?.destroy();
      this.session = undefined;
    }
  }

  /** The reserved session holding this runner's lock, opened and locked when there is none. */
  private async lockedSession(): Promise<ReservedConnection> {
    if (this.session) return this.session;
    const session = await openReservedConnection({
      connectionString: this.options.connectionString,
      applicationName: "tenor-runner-liveness",
      deadPeerMs: this.options.deadPeerMs,
      connectTimeoutMs: Math.max(1_000, this.options.checkIntervalMs * 4),
    });
    try {
      // Another runner drew the same key (one in two billion): draw again.
      for (let attempt = 0; !(await tryLockRunnerKey(session.client, this.key)); attempt++) {
        if (attempt >= 5) throw new Error("no free runner liveness key after 5 draws");
        this.key = randomInt(1, 2 ** 31 - 1);
      }
    } catch (error) {
      session.destroy();
      throw error;
    }
    this.session = session;
    return session;
  }

  private registration(): RunnerRegistration {
    return { key: this.key, workers: [...this.options.workers], host: hostname(), pid: process.pid };
  }

  private async takeOver(runnerId: string, registration: RunnerRegistration): Promise<void> {
    const byQueue = new Map<string, string[]>();
    for (const { queue, worker } of registration.workers)
      byQueue.set(queue, [...(byQueue.get(queue) ?? []), worker]);
    const reclaimed: { queue: string; jobIds: string[] }[] = [];
    for (const [queue, workers] of byQueue)
      reclaimed.push({ queue, jobIds: await reclaimDeadWorkerJobs(this.options.redis, queue, workers) });
    const moved = reclaimed.reduce((sum, r) => sum + r.jobIds.length, 0);
    await this.directory.forget(runnerId);
    await this.options.onTakeover?.(runnerId, reclaimed);
    this.stats.takeovers++;
    this.stats.jobsMoved += moved;
    this.logger.info("took over the jobs of a runner whose session ended", {
      deadRunner: runnerId,
      host: registration.host,
      pid: registration.pid,
      jobsMoved: moved,
    });
  }
}

/** Starts runner liveness from configuration for a started runner engine's workers. */
export async function startRunnerLiveness(options: {
  config: TenorConfig;
  redis: Redis;
  workers: readonly RunnerWorker[];
  logger: Logger;
  onTakeover?: RunnerLivenessOptions["onTakeover"];
}): Promise<RunnerLiveness> {
  const { config } = options;
  const liveness = new RunnerLiveness({
    connectionString: reservedSessionUrl(config),
    redis: options.redis,
    prefix: config.redisPrefix,
    workers: options.workers,
    checkIntervalMs: config.durable.liveness.checkIntervalMs,
    deadPeerMs: config.durable.sharding.livenessWindowMs,
    logger: options.logger,
    ...(options.onTakeover ? { onTakeover: options.onTakeover } : {}),
  });
  await liveness.start();
  return liveness;
}

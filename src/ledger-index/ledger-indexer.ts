import type { ChainClients } from "../chain/rpc-clients.js";
import { TenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import { shardOf } from "../ownership/shard-map.js";
import type { ShardLease, ShardWork } from "../ownership/shard-owner.js";
import { runCatchUp } from "./catch-up.js";
import { ChainReader } from "./chain-reader.js";
import { isStaleEpoch, type TailStep, tailStep } from "./live-tail.js";
import { pause } from "./pause.js";
import type { PgLedgerIndex, TailBatch } from "./store/chain-checkpoint.js";
import type { PgLedgerRanges, RangeLease } from "./store/ranges.js";
import type { PgLedgerScope } from "./store/scope.js";

/** The Ledger Index's settings (`indexer.*` in the configuration). */
export interface LedgerIndexSettings {
  pollIntervalMs: number;
  batchBlocks: number;
  rangeBlocks: number;
  leaseMs: number;
}

/** The stores ingest writes through; the host builds them (src/roles/ledger-index-stores.ts). */
export interface LedgerIndexStores {
  /** The live tail's shard-fenced blocks, logs and checkpoint. */
  index: PgLedgerIndex;
  /** The indexing scope the tail re-reads in each batch. */
  scope: PgLedgerScope;
  /** The catch-up ranges any replica leases. */
  ranges: PgLedgerRanges;
}

export interface LedgerIndexerOptions {
  stores: LedgerIndexStores;
  chains: ChainClients;
  shardCount: number;
  settings: LedgerIndexSettings;
  /** This replica's id (catch-up lease owner). */
  replicaId: string;
  logger: Logger;
  onReorg?: (chainId: number, depth: number) => void;
  /** Test seams (see LiveTailOptions.beforeCommit, CatchUpOptions.afterCommit). */
  hooks?: {
    beforeTailCommit?: (batch: TailBatch) => Promise<void>;
    afterRangeCommit?: (lease: RangeLease & { completed: boolean }) => Promise<void>;
  };
}

/** Longest a released shard's stop waits for its tail to notice, in ms: its writes are fenced anyway. */
const STOP_WAIT_MS = 1_000;

/** The shard key of a chain's live tail: one ingest owner per chain. */
export function chainShardKey(chainId: number): string {
  return `ledger-chain:${chainId}`;
}

/**
 * The indexer role's work (docs/ledger-index.md): `work` runs the live tail of every configured
 * chain whose shard this replica owns (one owner per chain, fenced by the shard's epoch), and
 * `startCatchUp` runs the catch-up loop that any replica shares.
 */
export class LedgerIndexer {
  readonly work: ShardWork;
  private readonly index: PgLedgerIndex;
  private readonly scope: PgLedgerScope;
  private readonly readers = new Map<number, ChainReader>();
  private readonly tails = new Map<number, Promise<void>[]>();
  private readonly logger: Logger;

  constructor(private readonly options: LedgerIndexerOptions) {
    this.index = options.stores.index;
    this.scope = options.stores.scope;
    this.logger = options.logger.child({ component: "indexer" });
    for (const chain of options.chains.all())
      this.readers.set(chain.config.id, new ChainReader(chain.public, chain.config.finality));
    this.work = {
      start: (lease) => this.startShard(lease),
      stop: (shard) => this.stopShard(shard),
    };
  }

  /** Starts the catch-up loop; the returned stop resolves once it has ended. */
  startCatchUp(): { stop(): Promise<void> } {
    const controller = new AbortController();
    const loop = runCatchUp(
      {
        ranges: this.options.stores.ranges,
        readers: this.readers,
        owner: this.options.replicaId,
        leaseMs: this.options.settings.leaseMs,
        batchBlocks: this.options.settings.batchBlocks,
        pollIntervalMs: this.options.settings.pollIntervalMs,
        logger: this.logger,
        ...(this.options.hooks?.afterRangeCommit ? { afterCommit: this.options.hooks.afterRangeCommit } : {}),
      },
      controller.signal,
    );
    return {
      async stop() {
        controller.abort();
        await loop;
      },
    };
  }

  private startShard(lease: ShardLease): void {
    const loops = [...this.readers.keys()]
      .filter((chainId) => shardOf(chainShardKey(chainId), this.options.shardCount) === lease.shard)
      .map((chainId) => this.runTail(chainId, lease));
    if (loops.length > 0) this.tails.set(lease.shard, loops);
  }

  private async stopShard(shard: number): Promise<void> {
    const loops = this.tails.get(shard);
    this.tails.delete(shard);
    if (!loops) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_WAIT_MS);
    });
    await Promise.race([Promise.all(loops), bound]);
    clearTimeout(timer);
  }

  /** The live tail of one chain while `lease` holds; a stale epoch ends it. */
  private async runTail(chainId: number, lease: ShardLease): Promise<void> {
    const { settings } = this.options;
    const tail = {
      chainId,
      reader: this.readers.get(chainId) as ChainReader,
      index: this.index,
      scope: this.scope,
      batchBlocks: settings.batchBlocks,
      rangeBlocks: settings.rangeBlocks,
      logger: this.logger,
      onReorg: (depth: number) => this.options.onReorg?.(chainId, depth),
      ...(this.options.hooks?.beforeTailCommit ? { beforeCommit: this.options.hooks.beforeTailCommit } : {}),
    };
    this.logger.info("ledger live tail started", { chainId, shard: lease.shard, epoch: lease.epoch });
    let waiting: string | undefined;
    while (!lease.signal.aborted) {
      try {
        const step = await tailStep(tail, lease);
        waiting = this.logWait(chainId, waiting, step);
        // Nothing new, the chain moved while a batch was read, or the node is syncing or behind:
        // ask again after the poll interval.
        if (step.kind !== "advanced" && step.kind !== "rolled-back")
          await pause(settings.pollIntervalMs, lease.signal);
      } catch (error) {
        if (isStaleEpoch(error)) {
          this.logger.warn("ledger write refused: stale owner epoch", {
            chainId,
            shard: lease.shard,
            epoch: lease.epoch,
            details: (error as TenorError).details,
          });
          return;
        }
        this.logger.warn("ledger live tail step failed", {
          chainId,
          code: error instanceof TenorError ? error.code : undefined,
          error: (error as Error).message,
        });
        await pause(settings.pollIntervalMs, lease.signal);
      }
    }
    this.logger.info("ledger live tail stopped", { chainId, shard: lease.shard });
  }

  /**
   * Logs a wait for the node when it begins or its reason changes, and its end, rather than on
   * every poll; returns the reason now waited for.
   */
  private logWait(chainId: number, before: string | undefined, step: TailStep): string | undefined {
    if (step.kind === "waiting") {
      if (step.reason !== before)
        this.logger.warn("ledger live tail waiting for the node", {
          chainId,
          reason: step.reason,
          detail: step.detail,
        });
      return step.reason;
    }
    if (before !== undefined && step.kind !== "retry")
      this.logger.info("ledger live tail resumed: the node caught up", { chainId, waitedFor: before });
    return step.kind === "retry" ? before : undefined;
  }
}

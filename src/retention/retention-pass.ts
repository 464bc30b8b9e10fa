import type { Logger } from "../observability/logger.js";
import type { RetentionPolicy } from "../store/retention/retention-policy.js";

export interface RetentionPassOptions {
  policies: readonly RetentionPolicy[];
  /** Rows older than this are eligible. */
  cutoff: Date;
  /** Primary rows per batch (`durable.retention.batchSize`). */
  batchSize: number;
  /** Upper bound on batches per policy in one pass, so a huge backlog spreads over several days. */
  maxBatchesPerPolicy?: number;
  logger: Logger;
}

/** What one policy did in a pass. */
export interface RetentionPolicyReport {
  policy: string;
  deleted: Record<string, number>;
  batches: number;
  /** Eligible rows left after the pass (locked, over the batch bound, or a failure); null if uncountable. */
  remaining: number | null;
  failures: number;
  errors: string[];
  durationMs: number;
}

export interface RetentionPassReport {
  cutoff: string;
  policies: RetentionPolicyReport[];
  deletedTotal: number;
  remainingTotal: number;
  failures: number;
  durationMs: number;
}

const DEFAULT_MAX_BATCHES = 1_000;

/**
 * One retention pass (docs/schedules.md, "Retention"): for each policy, bounded batches until one
 * comes back short (or the batch bound is reached), then a count of what remains. A failing batch
 * is counted and ends that policy for this pass (the next pass resumes); the other policies still
 * run.
 */
export async function runRetentionPass(options: RetentionPassOptions): Promise<RetentionPassReport> {
  const started = performance.now();
  const policies: RetentionPolicyReport[] = [];
  for (const policy of options.policies) policies.push(await runPolicy(policy, options));
  const report: RetentionPassReport = {
    cutoff: options.cutoff.toISOString(),
    policies,
    deletedTotal: policies.reduce((sum, p) => sum + sumValues(p.deleted), 0),
    remainingTotal: policies.reduce((sum, p) => sum + (p.remaining ?? 0), 0),
    failures: policies.reduce((sum, p) => sum + p.failures, 0),
    durationMs: Math.round(performance.now() - started),
  };
  const log = report.failures > 0 ? options.logger.warn : options.logger.info;
  log("retention pass finished", { ...report });
  return report;
}

async function runPolicy(
  policy: RetentionPolicy,
  options: RetentionPassOptions,
): Promise<RetentionPolicyReport> {
  const started = performance.now();
  const maxBatches = options.maxBatchesPerPolicy ?? DEFAULT_MAX_BATCHES;
  const report: RetentionPolicyReport = {
    policy: policy.name,
    deleted: {},
    batches: 0,
    remaining: null,
    failures: 0,
    errors: [],
    durationMs: 0,
  };
  while (report.batches < maxBatches) {
    try {
      const batch = await policy.deleteBatch(options.cutoff, options.batchSize);
      report.batches++;
      for (const [table, n] of Object.entries(batch.deleted))
        report.deleted[table] = (report.deleted[table] ?? 0) + n;
      if (batch.primary < options.batchSize) break;
    } catch (error) {
      report.failures++;
      report.errors.push((error as Error).message);
      options.logger.warn("retention batch failed; the next pass resumes", {
        policy: policy.name,
        error: (error as Error).message,
      });
      break;
    }
  }
  try {
    report.remaining = await policy.remaining(options.cutoff);
  } catch (error) {
    report.failures++;
    report.errors.push((error as Error).message);
  }
  report.durationMs = Math.round(performance.now() - started);
  return report;
}

function sumValues(record: Record<string, number>): number {
  return Object.values(record).reduce((sum, n) => sum + n, 0);
}

/** The cutoff for a retention window of `days` ending at `now`. */
export function retentionCutoff(now: Date, days: number): Date {
  return new Date(now.getTime() - days * 86_400_000);
}

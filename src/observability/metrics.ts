import client from "prom-client";
import type { Role } from "../config/role.js";
import { METRIC_NAMES } from "./metric-names.js";

/** Seconds; from 1 ms to about 30 s, which covers a durable step and a long workflow turn. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Seconds; an HTTP round trip to a receiver, up to the largest `webhooks.timeoutMs` (60 s). */
const WEBHOOK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * How a webhook attempt ended: `delivered` (2xx), `retry` (failed, another attempt follows) or
 * `dead` (failed and the last allowed: the dispatcher gave up and dead-lettered the delivery).
 */
export const WEBHOOK_ATTEMPT_OUTCOMES = ["delivered", "retry", "dead"] as const;
export type WebhookAttemptOutcome = (typeof WEBHOOK_ATTEMPT_OUTCOMES)[number];

/**
 * One process's Prometheus registry and the metrics every role shares. Each role serves it at
 * `/metrics` on its health port (the api on its API port). Every series carries `role`.
 */
export interface TenorMetrics {
  readonly registry: client.Registry;
  readonly executionsStarted: client.Counter<"workflow">;
  readonly executionsFinished: client.Counter<"workflow" | "status">;
  /** Failed executions by workflow and bounded failure class (src/runtime/failure-class.ts). */
  readonly executionFailures: client.Counter<"workflow" | "class">;
  readonly turnDuration: client.Histogram<"workflow" | "outcome">;
  readonly stepDuration: client.Histogram<"workflow" | "step">;
  /** One activity job's run (all its attempts), by declared activity name. */
  readonly activityDuration: client.Histogram<"activity">;
  /** Time a job waited between becoming ready and a worker taking it, by queue. */
  readonly jobWait: client.Histogram<"queue">;
  readonly journalBatchSize: client.Histogram<never>;
  readonly wakeupRepairs: client.Counter<never>;
  readonly scheduleRuns: client.Counter<"schedule" | "outcome">;
  readonly apiRequests: client.Counter<"method" | "route" | "status">;
  readonly apiRequestDuration: client.Histogram<"method" | "route">;
  readonly apiAdmissionRefusals: client.Counter<"reason">;
  readonly shardsOwned: client.Gauge<"domain">;
  /** Recorded webhook attempts by outcome ({@link WEBHOOK_ATTEMPT_OUTCOMES}); runners only. */
  readonly webhookAttempts: client.Counter<"outcome">;
  readonly webhookAttemptDuration: client.Histogram<"outcome">;
}

/** A fresh registry (never prom-client's global one, so tests and roles do not share series). */
export function createMetrics(role: Role): TenorMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ role });
  client.collectDefaultMetrics({ register: registry, prefix: "tenor_" });
  const registers = [registry];
  return {
    registry,
    executionsStarted: new client.Counter({
      name: METRIC_NAMES.executionsStarted,
      help: "Executions created, by workflow.",
      labelNames: ["workflow"],
      registers,
    }),
    executionsFinished: new client.Counter({
      name: METRIC_NAMES.executionsFinished,
      help: "Executions that reached a terminal status on this runner, by workflow and status.",
      labelNames: ["workflow", "status"],
      registers,
    }),
    executionFailures: new client.Counter({
      name: METRIC_NAMES.executionFailures,
      help: "Executions that failed on this runner, by workflow and failure class (business, child, cancelled, nondeterminism, recovery_exhausted, error).",
      labelNames: ["workflow", "class"],
      registers,
    }),
    activityDuration: new client.Histogram({
      name: METRIC_NAMES.activityDuration,
      help: "Activity job duration in seconds (every attempt of one run), by declared activity name.",
      labelNames: ["activity"],
      buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 120],
      registers,
    }),
    jobWait: new client.Histogram({
      name: METRIC_NAMES.jobWait,
      help: "Seconds a job waited from ready (created, or its delay over) until a worker took it, by queue.",
      labelNames: ["queue"],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60],
      registers,
    }),
    turnDuration: new client.Histogram({
      name: METRIC_NAMES.turnDuration,
      help: "Duration of one workflow turn (fence to outcome), in seconds, by workflow and outcome.",
      labelNames: ["workflow", "outcome"],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    stepDuration: new client.Histogram({
      name: METRIC_NAMES.stepDuration,
      help:
        "Duration of a step's work until its checkpoint, retries included, in seconds, by workflow and step " +
        "(the first 32 step names of a workflow; later ones as `other`).",
      labelNames: ["workflow", "step"],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    journalBatchSize: new client.Histogram({
      name: METRIC_NAMES.journalBatchSize,
      help: "Journal rows written by one group-commit statement.",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    }),
    wakeupRepairs: new client.Counter({
      name: METRIC_NAMES.wakeupRepairs,
      help: "Executions the sweep re-enqueued because PostgreSQL said they should move and no job was live.",
      registers,
    }),
    scheduleRuns: new client.Counter({
      name: METRIC_NAMES.scheduleRuns,
      help: "Schedule ticks this runner ran, by schedule and outcome.",
      labelNames: ["schedule", "outcome"],
      registers,
    }),
    apiRequests: new client.Counter({
      name: METRIC_NAMES.apiRequests,
      help: "API requests, by method, route template and status code.",
      labelNames: ["method", "route", "status"],
      registers,
    }),
    apiRequestDuration: new client.Histogram({
      name: METRIC_NAMES.apiRequestDuration,
      help: "API request duration, in seconds, by method and route template.",
      labelNames: ["method", "route"],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    apiAdmissionRefusals: new client.Counter({
      name: METRIC_NAMES.apiAdmissionRefusals,
      help: "Requests refused with 503 by admission control, by reason (pool_queue, event_loop_lag, in_flight).",
      labelNames: ["reason"],
      registers,
    }),
    shardsOwned: new client.Gauge({
      name: METRIC_NAMES.shardsOwned,
      help: "Shards this replica owns now, by ownership domain.",
      labelNames: ["domain"],
      registers,
    }),
    webhookAttempts: new client.Counter({
      name: METRIC_NAMES.webhookAttempts,
      help: "Webhook delivery attempts whose outcome was recorded, by outcome (delivered, retry, dead).",
      labelNames: ["outcome"],
      registers,
    }),
    webhookAttemptDuration: new client.Histogram({
      name: METRIC_NAMES.webhookAttemptDuration,
      help: "Webhook delivery latency: one attempt from request to answer, error or timeout, in seconds, by outcome.",
      labelNames: ["outcome"],
      buckets: WEBHOOK_BUCKETS,
      registers,
    }),
  };
}

/**
 * A gauge computed at scrape time by `read` (queue depths, execution counts). A failed read
 * leaves the gauge empty for that scrape instead of failing the whole scrape.
 */
export function scrapedGauge<L extends string>(
  metrics: TenorMetrics,
  options: { name: string; help: string; labelNames: readonly L[] },
  read: () => Promise<{ labels: Record<L, string>; value: number }[]>,
): void {
  // A start that failed part-way is relaunched in the same process with the same registry
  // (src/roles/startup-relaunch.ts): the new attempt's reader replaces the old one's.
  metrics.registry.removeSingleMetric(options.name);
  new client.Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers: [metrics.registry],
    async collect() {
      this.reset();
      try {
        for (const { labels, value } of await read()) this.set(labels as client.LabelValues<L>, value);
      } catch {
        // A dependency away for one scrape: the series is absent, /readyz says why.
      }
    },
  });
}

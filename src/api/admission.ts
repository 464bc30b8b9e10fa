import type { RequestHandler } from "express";
import type { TenorMetrics } from "../observability/metrics.js";
import { problemType } from "./problem.js";

/** `api.admission.*` of the configuration (src/config/schema.ts documents units and defaults). */
export interface AdmissionSettings {
  maxPoolWaiting: number;
  maxEventLoopLagMs: number;
  retryAfterSeconds: number;
}

/** The problem+json `code` of a refusal (stable, like every API error code). */
export const OVERLOADED = "OVERLOADED";

/** Why a request was refused; also the `reason` label of tenor_api_admission_refusals_total. */
export type AdmissionReason = "pool_queue" | "event_loop_lag";

export interface AdmissionOptions {
  settings: AdmissionSettings;
  /** The pg pool: `waitingCount` is how many queries wait for a connection. */
  pool: { readonly waitingCount: number };
  /** Event-loop lag now, in milliseconds (EventLoopLagMonitor.lagMs). */
  lagMs: () => number;
  metrics?: TenorMetrics;
}

/**
 * Admission control: when the pool's wait queue or the event-loop lag passes its bound, a request
 * is refused at once with 503, `Retry-After` and problem+json, instead of queueing until the
 * pool's connection timeout turns it into a 500. Accepted requests keep a bounded latency past
 * saturation; clients and load balancers retry elsewhere or later.
 */
export function admissionControl(options: AdmissionOptions): RequestHandler {
  const { settings } = options;
  return (req, res, next) => {
    const reason = refusalReason(options);
    if (reason === null) {
      next();
      return;
    }
    options.metrics?.apiAdmissionRefusals.inc({ reason });
    res
      .status(503)
      .set("Retry-After", String(settings.retryAfterSeconds))
      .type("application/problem+json")
      .send(
        JSON.stringify({
          type: problemType(OVERLOADED),
          title: "Service Unavailable",
          status: 503,
          detail:
            reason === "pool_queue"
              ? "too many requests are waiting for a database connection; retry later"
              : "the server is saturated (event-loop lag); retry later",
          instance: req.originalUrl.split("?")[0],
          code: OVERLOADED,
          retryable: true,
          reason,
          retryAfterSeconds: settings.retryAfterSeconds,
        }),
      );
  };
}

function refusalReason(options: AdmissionOptions): AdmissionReason | null {
  const { maxPoolWaiting, maxEventLoopLagMs } = options.settings;
  if (maxPoolWaiting > 0 && options.pool.waitingCount > maxPoolWaiting) return "pool_queue";
  if (maxEventLoopLagMs > 0 && options.lagMs() > maxEventLoopLagMs) return "event_loop_lag";
  return null;
}

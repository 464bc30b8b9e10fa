import type { RequestHandler } from "express";
import type { TenorMetrics } from "../observability/metrics.js";
import { API_ERRORS } from "./api-error-codes.js";
import { LoadShedder } from "./load-shedder.js";
import { problemType } from "./problem.js";

/** `api.admission.*` of the configuration (src/config/schema.ts documents units and defaults). */
export interface AdmissionSettings {
  /** Expected wait for a pool connection, in ms, past which a request is refused; 0 disables. */
  maxPoolWaitMs: number;
  /** Requests in progress in this process; 0 disables (see refusalReason). */
  maxInFlight: number;
  /** Event-loop utilization (0..1) past which a growing share is refused (load-shedder.ts); 0 disables. */
  maxEventLoopUtilization: number;
  maxEventLoopLagMs: number;
  retryAfterSeconds: number;
}

/** The problem+json `code` of a refusal (stable, like every API error code). */
export const OVERLOADED = API_ERRORS.OVERLOADED;

/** Why a request was refused; also the `reason` label of tenor_api_admission_refusals_total. */
export type AdmissionReason = "pool_queue" | "event_loop_lag" | "in_flight" | "event_loop_busy";

export interface AdmissionOptions {
  settings: AdmissionSettings;
  /** Expected wait for a pool connection of a request arriving now, in ms (PoolWaitTracker). */
  poolWaitMs: () => number;
  /** Event-loop lag now, in milliseconds (EventLoopLagMonitor.lagMs). */
  lagMs: () => number;
  /** Sheds a share of requests while the event loop is saturated (default: a LoadShedder). */
  shedder?: Pick<LoadShedder, "shed">;
  metrics?: TenorMetrics;
}

const REFUSAL_DETAIL: Readonly<Record<AdmissionReason, string>> = {
  pool_queue: "requests wait too long for a database connection; retry later",
  event_loop_lag: "the server is saturated (event-loop lag); retry later",
  in_flight: "the server is serving as many requests as it takes at once; retry later",
  event_loop_busy: "the server is saturated (event loop busy); retry later",
};

/** Admission control of one api process: the middleware, and what /readyz reports of it. */
export interface Admission {
  /** Refuses a request at once (503, Retry-After, problem+json OVERLOADED) or lets it through. */
  middleware: RequestHandler;
  /**
   * Why every request would be refused right now, or null. /readyz answers 503 `overloaded` with
   * this reason, so a probe never calls ready a process that refuses the next request. Shedding
   * (`event_loop_busy`) is left out: it refuses a share, not every request, and its share only
   * falls while requests arrive, which an unready process would no longer get.
   */
  refusal(): AdmissionReason | null;
}

/**
 * Admission control: when the expected wait for a pool connection or the event-loop lag passes
 * its bound, a request is refused at once with 503, `Retry-After` and problem+json, instead of
 * queueing until the pool's connection timeout turns it into an error. Accepted requests keep a
 * bounded latency past saturation; clients and load balancers retry elsewhere or later.
 */
export function createAdmission(options: AdmissionOptions): Admission {
  const { settings } = options;
  const shedder =
    options.shedder ??
    (settings.maxEventLoopUtilization > 0
      ? new LoadShedder(settings.maxEventLoopUtilization)
      : { shed: () => false });
  let inFlight = 0;
  const middleware: RequestHandler = (req, res, next) => {
    const reason = refusalReason(options, inFlight) ?? (shedder.shed() ? "event_loop_busy" : null);
    if (reason === null) {
      inFlight++;
      // 'close' follows every response, sent or aborted: the count cannot leak.
      res.once("close", () => {
        inFlight--;
      });
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
          detail: REFUSAL_DETAIL[reason],
          instance: req.originalUrl.split("?")[0],
          code: OVERLOADED,
          retryable: true,
          reason,
          retryAfterSeconds: settings.retryAfterSeconds,
        }),
      );
  };
  return { middleware, refusal: () => refusalReason(options, inFlight) };
}

/**
 * Hard bounds, checked in order: the expected wait for a pool connection, the requests this
 * process has in progress (whatever they wait for: PostgreSQL, Redis, the loop itself), and the
 * event-loop lag.
 */
function refusalReason(options: AdmissionOptions, inFlight: number): AdmissionReason | null {
  const { maxPoolWaitMs, maxEventLoopLagMs, maxInFlight } = options.settings;
  if (maxPoolWaitMs > 0 && options.poolWaitMs() > maxPoolWaitMs) return "pool_queue";
  if (maxInFlight > 0 && inFlight >= maxInFlight) return "in_flight";
  if (maxEventLoopLagMs > 0 && options.lagMs() > maxEventLoopLagMs) return "event_loop_lag";
  return null;
}

import type { TenorConfig } from "../config/schema.js";
import { toTenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";
import type { TenorMetrics, WebhookAttemptOutcome } from "../observability/metrics.js";
import { webhookRetryDelayMs } from "./backoff.js";
import { WEBHOOK_HEADERS } from "./event-types.js";
import type { WebhookSecretKeyring } from "./secret-keyring.js";
import { webhookSignatureHeader } from "./signature.js";
import type { AttemptOutcome, ClaimedDelivery, PgWebhookDispatch } from "./store/pg-webhook-dispatch.js";
import { sendWebhook, type WebhookAttemptResult } from "./webhook-sender.js";

export type WebhookSettings = TenorConfig["webhooks"];

export interface WebhookDispatcherOptions {
  /** The delivery outbox: claims, attempt records, dead letters. */
  store: PgWebhookDispatch;
  settings: WebhookSettings;
  /** Opens each subscription's stored secret to sign with (`webhooks.secretKeys`). */
  keyring: WebhookSecretKeyring;
  logger: Logger;
  /**
   * Counts each attempt whose outcome was recorded, by outcome, and observes its duration
   * (`tenor_webhook_attempts_total`, `tenor_webhook_attempt_duration_seconds`). Optional: no metrics.
   */
  metrics?: Pick<TenorMetrics, "webhookAttempts" | "webhookAttemptDuration">;
}

export interface WebhookDispatcher {
  /** Stops claiming and waits for the attempts in flight (each bounded by `timeoutMs`). */
  stop(): Promise<void>;
}

/**
 * Time a claimed delivery stays out of other dispatchers' reach beyond the attempt's own timeout,
 * in ms: room to record the outcome. A dispatcher that dies mid-attempt makes its deliveries due
 * again `timeoutMs` + this after the claim, and another runner sends them (at least once).
 */
const LEASE_MARGIN_MS = 5_000;

/**
 * The runners' webhook dispatcher (docs/webhooks.md, "Delivery"): claims due deliveries from
 * PostgreSQL, up to `concurrency` in flight per process, signs and sends each, and records the
 * attempt; a failure is retried after an exponential, jittered backoff until `maxAttempts`, then
 * dead-lettered. Every runner runs one; `FOR UPDATE SKIP LOCKED` keeps them apart. Ordering per
 * subscription is not kept: a retried event can arrive after a later one.
 */
export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const { settings } = options;
  const logger = options.logger.child({ component: "webhooks" });
  const { store } = options;
  const inFlight = new Set<Promise<void>>();
  let running = true;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const attempt = async (claimed: ClaimedDelivery) => {
    const result = await send(claimed, options.keyring, settings);
    const outcome = decide(result, claimed.attempt, settings);
    let recorded: boolean;
    try {
      recorded = await store.finishAttempt({
        ...result,
        deliveryId: claimed.deliveryId,
        receiptId: claimed.receiptId,
        attempt: claimed.attempt,
        outcome,
      });
    } catch (error) {
      // The lease ends and another claim sends it again: at least once, never lost.
      logger.warn("webhook attempt outcome not recorded; the delivery comes due again after its lease", {
        deliveryId: claimed.deliveryId,
        error: (error as Error).message,
      });
      return;
    }
    // An attempt superseded meanwhile (lease expired, redelivered, subscription deleted) decided nothing.
    if (recorded && options.metrics) {
      const label: WebhookAttemptOutcome = outcome.kind;
      options.metrics.webhookAttempts.inc({ outcome: label });
      options.metrics.webhookAttemptDuration.observe({ outcome: label }, result.durationMs / 1_000);
    }
    const log = outcome.kind === "dead" ? logger.warn : logger.debug;
    log(`webhook delivery ${outcome.kind === "retry" ? "will be retried" : outcome.kind}`, {
      deliveryId: claimed.deliveryId,
      eventId: claimed.eventId,
      attempt: claimed.attempt,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
    });
  };

  const loop = async () => {
    while (running) {
      const room = settings.concurrency - inFlight.size;
      let claimed: ClaimedDelivery[] = [];
      if (room > 0) {
        try {
          claimed = await store.claimDue(room, settings.timeoutMs + LEASE_MARGIN_MS);
        } catch (error) {
          logger.warn("webhook claim failed; retrying after the poll interval", {
            error: (error as Error).message,
          });
        }
      }
      for (const delivery of claimed) {
        const work = attempt(delivery).finally(() => {
          inFlight.delete(work);
          wake?.();
        });
        inFlight.add(work);
      }
      if (!running) break;
      // Full: wait for an attempt to end. Idle: wait for the poll interval. Busy with room: go on.
      if (inFlight.size >= settings.concurrency || claimed.length === 0) await pause(settings.pollIntervalMs);
    }
  };
  const looping = loop();
  logger.info("webhook dispatcher started", {
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    maxAttempts: settings.maxAttempts,
  });
  return {
    async stop() {
      running = false;
      wake?.();
      await looping;
      await Promise.allSettled([...inFlight]);
    },
  };
}

function send(
  claimed: ClaimedDelivery,
  keyring: WebhookSecretKeyring,
  settings: WebhookSettings,
): Promise<WebhookAttemptResult> {
  let secret: string;
  try {
    secret = keyring.open(claimed.subscriptionId, claimed.secret);
  } catch (error) {
    // Nothing is sent unsigned: a failed attempt whose receipt names the key, retried like any other.
    const { code, message } = toTenorError(error);
    return Promise.resolve({ statusCode: null, error: `${code}: ${message}`, response: null, durationMs: 0 });
  }
  // Signed at send time, every attempt: a retry hours later still passes the receiver's replay window.
  const timestamp = Math.floor(Date.now() / 1_000);
  return sendWebhook({
    url: claimed.url,
    body: claimed.body,
    headers: {
      "content-type": "application/json",
      "user-agent": "Tenor-Webhooks/1",
      [WEBHOOK_HEADERS.signature]: webhookSignatureHeader(secret, timestamp, claimed.body),
      [WEBHOOK_HEADERS.eventId]: claimed.eventId,
      [WEBHOOK_HEADERS.eventType]: claimed.eventType,
      [WEBHOOK_HEADERS.attempt]: String(claimed.attempt),
    },
    timeoutMs: settings.timeoutMs,
    allowPrivateAddresses: settings.allowPrivateAddresses,
  });
}

/** Delivered on 2xx; otherwise retried until `maxAttempts` attempts were made, then dead. */
export function decide(
  result: WebhookAttemptResult,
  attempt: number,
  settings: WebhookSettings,
): AttemptOutcome {
  if (result.error === null) return { kind: "delivered" };
  if (attempt >= settings.maxAttempts) return { kind: "dead" };
  return { kind: "retry", delayMs: webhookRetryDelayMs(attempt, settings.backoff) };
}

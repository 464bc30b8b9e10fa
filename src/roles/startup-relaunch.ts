import { type TenorError, toTenorError } from "../errors/tenor-error.js";
import type { Logger } from "../observability/logger.js";

/** `startup.*` of the configuration (src/config/schema.ts documents units and defaults). */
export interface RelaunchPolicy {
  relaunchBudgetMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export interface RelaunchOptions {
  policy: RelaunchPolicy;
  logger: Logger;
  /** Injected for tests; default Date.now and setTimeout. */
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Why startup gave up: the last failure, after how many attempts and how long. */
export class StartupFailed extends Error {
  constructor(
    readonly failure: TenorError<string>,
    readonly attempts: number,
    readonly elapsedMs: number,
    readonly budgetExhausted: boolean,
  ) {
    super(failure.message);
  }
}

/**
 * Runs `attempt` (connect, check, start the role) until it succeeds. A retryable failure (a
 * dependency unreachable or dropping before the role is up) is logged with its code and the next
 * delay, `cleanup` releases what the attempt opened, and the attempt runs again after an
 * exponential backoff, as long as the next try would still start within `relaunchBudgetMs` of the
 * first. A failure retrying cannot fix (TenorError with `retryable: false`) ends at once.
 *
 * @throws StartupFailed with the last failure when the budget is spent or the failure is final.
 */
export async function startWithRelaunch<T>(
  attempt: () => Promise<T>,
  cleanup: () => Promise<void>,
  options: RelaunchOptions,
): Promise<T> {
  const clock = options.clock ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const { policy, logger } = options;
  const first = clock();
  let delay = policy.initialDelayMs;
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      const failure = toTenorError(error);
      await cleanup();
      const elapsedMs = clock() - first;
      const fields = { code: failure.code, error: failure.message, attempts, elapsedMs };
      if (!failure.retryable) throw new StartupFailed(failure, attempts, elapsedMs, false);
      if (elapsedMs + delay > policy.relaunchBudgetMs) {
        logger.error("startup relaunch budget exhausted; exiting", {
          ...fields,
          budgetMs: policy.relaunchBudgetMs,
        });
        throw new StartupFailed(failure, attempts, elapsedMs, true);
      }
      logger.warn("role failed to start; relaunching", {
        ...fields,
        nextDelayMs: delay,
        budgetMs: policy.relaunchBudgetMs,
      });
      await sleep(delay);
      delay = Math.min(delay * 2, policy.maxDelayMs);
    }
  }
}

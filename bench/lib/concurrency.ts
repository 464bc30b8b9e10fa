/** Small async helpers the workloads share. */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `fn` over `count` indexes with at most `limit` calls in flight, in index order of start.
 * Rejects with the first error after the calls in flight settle.
 */
export async function forEachLimit(
  count: number,
  limit: number,
  fn: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const lanes = Array.from({ length: Math.min(limit, count) }, async () => {
    while (failure === null && next < count) {
      const index = next++;
      try {
        await fn(index);
      } catch (error) {
        failure ??= error;
      }
    }
  });
  await Promise.all(lanes);
  if (failure !== null) throw failure;
}

/**
 * Polls `check` every `everyMs` until it returns a non-null value or `timeoutMs` passes.
 * @throws Error naming `what` on timeout.
 */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | null>,
  options: { everyMs?: number; timeoutMs: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}`);
    await sleep(options.everyMs ?? 20);
  }
}

/** Milliseconds since an arbitrary origin, sub-millisecond (performance.now). */
export function nowMs(): number {
  return performance.now();
}

/**
 * Runs `pass` every `intervalMs` until stopped. Passes never overlap (a slow one makes the next
 * tick skip), a failed pass goes to `onError` and the next tick tries again, and `stop` waits for
 * the pass in progress. The timer does not keep the process alive.
 */
export function startRepeatingTask(
  intervalMs: number,
  pass: () => Promise<unknown>,
  onError: (error: Error) => void,
): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (stopped || running) return;
    running = pass()
      .catch(onError)
      .finally(() => {
        running = null;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

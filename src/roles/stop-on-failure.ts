/**
 * Runs `next`; when it throws, stops what was already started and rethrows. Role start functions
 * use it so a failed start leaves nothing running: startup may relaunch in process.
 */
export async function stopOnFailure<T>(
  started: { stop(): Promise<void> },
  next: () => Promise<T>,
): Promise<T> {
  try {
    return await next();
  } catch (error) {
    await started.stop().catch(() => undefined);
    throw error;
  }
}

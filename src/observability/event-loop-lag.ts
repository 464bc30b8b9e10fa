/**
 * Event-loop lag, measured by a timer that should fire every `intervalMs`: how late it fires is
 * the lag. `lagMs()` is the largest lag seen within the last `windowMs`, so one late tick is
 * remembered for a moment instead of vanishing at the next on-time tick. The timer is unref'd.
 */
export class EventLoopLagMonitor {
  private readonly samples: { at: number; lag: number }[] = [];
  private last = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly intervalMs = 100,
    private readonly windowMs = 1_000,
  ) {
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  /** The largest lag within the window, in milliseconds (0 when the loop kept time). */
  lagMs(): number {
    const now = performance.now();
    // A loop blocked right now has not ticked: count the overdue time too.
    let lag = Math.max(0, now - this.last - this.intervalMs);
    for (const sample of this.samples) if (now - sample.at <= this.windowMs) lag = Math.max(lag, sample.lag);
    return lag;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = performance.now();
    this.samples.push({ at: now, lag: Math.max(0, now - this.last - this.intervalMs) });
    this.last = now;
    while (this.samples.length > 0 && now - this.samples[0]!.at > this.windowMs) this.samples.shift();
  }
}

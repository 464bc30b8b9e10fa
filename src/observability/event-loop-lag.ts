/**
 * Event-loop lag, measured by a timer that should fire every `intervalMs`: how late it fires is
 * the lag. `lagMs()` is the largest lag seen within the last `windowMs`, so one late tick is
 * remembered for a moment instead of vanishing at the next on-time tick. The timer is unref'd.
 * `restart()` forgets what was measured so far: the api calls it when the process turns ready.
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

  /**
   * Forgets every sample and starts timing from now. Startup (loading modules, building the app,
   * binding ports) blocks the loop by design; counted, that lag refused the first requests after
   * /readyz had said 200. Lag from here on is the serving loop's.
   */
  restart(): void {
    this.samples.length = 0;
    this.last = performance.now();
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

import { performance } from "node:perf_hooks";

/** How often the shed share is adjusted, in ms. */
const ADJUST_MS = 250;
/** Percent added per busy window and removed per calm one: quick to shed, slower to stop. */
const STEP_UP = 10;
const STEP_DOWN = 5;
/** Never refuse everything: some requests keep getting through to measure the recovery. */
const MAX_PERCENT = 95;

/**
 * Refuses a share of requests while the event loop is saturated, the share adapting every
 * ADJUST_MS: up while utilization stays above `maxUtilization`, down once it falls below.
 *
 * Why: past CPU saturation requests wait in the kernel's socket queues before the app sees them,
 * so neither the pool's queue nor the requests in progress grow, and the lag a timer measures stays
 * small; utilization pinned near 1 is what shows it. Refusing everything while it is high would
 * starve the server (refusals keep the loop busy too), hence a share: bench W10 measures it.
 * Refusals are spread evenly (an accumulator), not random, so a test can count them.
 */
export class LoadShedder {
  /** Whole percents, so the accumulator counts exactly. */
  private percent = 0;
  private owed = 0;
  private adjustedAt: number;

  constructor(
    private readonly maxUtilization: number,
    /** Utilization since the previous call, 0..1 (default: Node's eventLoopUtilization). */
    private readonly utilizationSinceLast: () => number = utilizationSince(),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.adjustedAt = this.now();
  }

  /** The share of requests being refused now, 0..0.95. */
  get sheddingShare(): number {
    return this.percent / 100;
  }

  /** True when this request is to be refused. */
  shed(): boolean {
    const now = this.now();
    if (now - this.adjustedAt >= ADJUST_MS) {
      this.adjustedAt = now;
      const busy = this.utilizationSinceLast() > this.maxUtilization;
      this.percent = busy
        ? Math.min(MAX_PERCENT, this.percent + STEP_UP)
        : Math.max(0, this.percent - STEP_DOWN);
      if (this.percent === 0) this.owed = 0;
    }
    if (this.percent === 0) return false;
    this.owed += this.percent;
    if (this.owed < 100) return false;
    this.owed -= 100;
    return true;
  }
}

function utilizationSince(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const current = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(current, last);
    last = current;
    return delta.utilization;
  };
}

import { type Duration, toMilliseconds } from "../engine/duration.js";

/**
 * The workflow clock of a test kit: real time plus the time skipped so far. Timers, wait deadlines
 * and `ctx.now()` read it, so the journal records virtual times; nothing else in the process is
 * affected (BullMQ, PostgreSQL and the test's own timeouts keep real time).
 */
export class TestClock {
  private skippedMs = 0;

  /** @param startAt - where virtual time starts (default: now); later reads move with real time. */
  constructor(startAt?: Date) {
    if (startAt) this.skippedMs = startAt.getTime() - Date.now();
  }

  /** Virtual now, in ms since the epoch (the runner's `clock`). */
  readonly now = (): number => Date.now() + this.skippedMs;

  /** Virtual now as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /** True once any time was skipped (or the clock started elsewhere than now). */
  get skipped(): boolean {
    return this.skippedMs !== 0;
  }

  /** Moves virtual time forward by `duration` ("2d", "30d", "90m", or ms); never backwards. */
  advance(duration: Duration): Date {
    const ms = toMilliseconds(duration);
    if (!(ms >= 0)) throw new RangeError(`cannot skip ${String(duration)}: time only moves forward`);
    this.skippedMs += ms;
    return this.date();
  }

  /** Moves virtual time forward to `at`; a time already passed is a no-op. */
  advanceTo(at: Date): Date {
    const ahead = at.getTime() - this.now();
    if (ahead > 0) this.skippedMs += ahead;
    return this.date();
  }
}

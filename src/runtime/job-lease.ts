import type { Job } from "bullmq";

/**
 * The BullMQ lock a processing holds on its job, as this process last saw it confirmed.
 *
 * A process that was stopped (SIGSTOP, a VM freeze, a long GC) does not know it slept: its job's
 * lock may have expired and the job been handed to another runner, which is already running turns.
 * Starting a turn then would take a newer fencing token and fence the rightful owner out. So a
 * processing proves its lock (extends it, which fails when the token no longer matches) before a
 * turn whenever it has not seen the lock confirmed for longer than `staleAfterMs` — half the lock
 * duration: the lock manager renews every half duration, so a healthy runner rarely pays the
 * round trip, and a resumed one always does (docs/engine.md, "Fencing").
 */
export class JobLease {
  private confirmedAt: number;

  constructor(
    private readonly job: Job,
    private readonly token: string,
    private readonly lockDurationMs: number,
  ) {
    // processedOn: when this processing took the job (moveToActive set the lock then).
    this.confirmedAt = job.processedOn ?? Date.now();
  }

  private get staleAfterMs(): number {
    return this.lockDurationMs / 2;
  }

  /**
   * True when this processing still holds the job's lock. Extends the lock (one round trip) only
   * when it was last confirmed longer ago than half the lock duration, or when `force` is set.
   */
  async held(options: { force?: boolean } = {}): Promise<boolean> {
    if (!options.force && Date.now() - this.confirmedAt <= this.staleAfterMs) return true;
    for (;;) {
      const sent = Date.now();
      const extended = (await this.job.extendLock(this.token, this.lockDurationMs)) === 1;
      if (!extended) return false;
      this.confirmedAt = sent;
      // The answer is only as fresh as the moment it was asked: a stall while waiting asks again.
      if (Date.now() - sent <= this.staleAfterMs) return true;
    }
  }
}

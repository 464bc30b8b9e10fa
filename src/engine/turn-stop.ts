import type { NonDeterminismError } from "./errors.js";
import type { WaitDescriptor } from "./execution-store.js";

/**
 * Thrown into workflow code when the turn has to stop (a wait, a suspension, a hold or a stale
 * fence). Workflow code should let it pass; if it catches it, the engine stops the turn anyway.
 */
export class StopSignal extends Error {
  constructor() {
    super("the turn stops here; the engine resumes the execution later");
    this.name = "StopSignal";
  }
}

export type StopReason =
  | {
      kind: "park";
      waits: WaitDescriptor[];
      wakeAt: number | null;
      child: boolean;
      signalNames: string[];
      /** A wait resolved after another branch parked: the body may not have seen it; run again now. */
      rerun?: boolean;
    }
  | { kind: "suspend"; wait: WaitDescriptor }
  /**
   * The body was handed an outcome whose row PostgreSQL then refused (journaled as a refusal in
   * its place): this turn cannot go on from what the body saw; a new turn replays the journal now.
   */
  | { kind: "replay" }
  | { kind: "hold"; error: NonDeterminismError }
  | { kind: "fenced" };

const SEVERITY: Record<StopReason["kind"], number> = { park: 0, suspend: 1, replay: 2, hold: 3, fenced: 4 };

/**
 * Why the turn stops. Several branches of `Promise.all` may stop for different reasons; the most
 * severe wins (fenced > hold > replay > suspend > park) and parks accumulate every wait they name.
 */
export class TurnStop {
  reason: StopReason | null = null;

  get closed(): boolean {
    return this.reason !== null;
  }

  park(
    wait: WaitDescriptor,
    wakeAt: number | null,
    also: { child?: boolean; signalName?: string } = {},
  ): void {
    if (this.reason && this.reason.kind !== "park") return;
    const current = this.reason ?? {
      kind: "park" as const,
      waits: [],
      wakeAt: null,
      child: false,
      signalNames: [],
    };
    current.waits.push(wait);
    if (wakeAt !== null) current.wakeAt = current.wakeAt === null ? wakeAt : Math.min(current.wakeAt, wakeAt);
    if (also.child) current.child = true;
    if (also.signalName) current.signalNames.push(also.signalName);
    this.reason = current;
  }

  /**
   * A position was resolved (a signal consumed, a child or activity outcome recorded) after the
   * turn had begun to stop. The branch that awaited it may never reach the body (a parked branch
   * already settled a `Promise.race`), so a park asks for an immediate re-run, which replays it.
   */
  resolvedAfterClose(): void {
    if (this.reason?.kind === "park") this.reason.rerun = true;
  }

  suspend(wait: WaitDescriptor): void {
    this.escalate({ kind: "suspend", wait });
  }

  hold(error: NonDeterminismError): void {
    this.escalate({ kind: "hold", error });
  }

  replay(): void {
    this.escalate({ kind: "replay" });
  }

  fence(): void {
    this.escalate({ kind: "fenced" });
  }

  private escalate(next: StopReason): void {
    if (this.reason && SEVERITY[this.reason.kind] >= SEVERITY[next.kind]) return;
    this.reason = next;
  }
}

import type { EngineHarness } from "../support/engine-harness.js";

/** Waits until the execution is parked (status waiting) on a wait of `kind`. */
export async function parkedOn(h: EngineHarness, id: string, kind: string): Promise<void> {
  await h.waitForView(
    id,
    (v) => v.status === "waiting" && (v.waitingFor ?? []).some((w) => w.kind === kind),
    `waiting on ${kind}`,
  );
}

/**
 * The faults the explorer injects at a point (docs/engine.md, "The fault-point explorer"), and how
 * a run is named so that it can be replayed: `<shape>/<point>/<fault>`, e.g.
 * `all-settled/pg:tenor_append_entry#1/22P05`. No I/O here.
 */

export const PG_FAULTS = ["kill-before", "kill-after", "22P05", "23505", "40001", "57P01"] as const;
export const REDIS_FAULTS = ["kill-before", "kill-after", "redis-error", "redis-drop"] as const;

export type FaultKind = (typeof PG_FAULTS)[number] | (typeof REDIS_FAULTS)[number];

export const ALL_FAULTS: readonly FaultKind[] = [...new Set<FaultKind>([...PG_FAULTS, ...REDIS_FAULTS])];

/** The process dies at the point: SIGKILL before the statement is sent, or once its answer arrived. */
export function isKill(fault: FaultKind): boolean {
  return fault === "kill-before" || fault === "kill-after";
}

/** Faults that may legitimately make a step's work run again: the turn lost its process or connection. */
export function handsOver(fault: FaultKind): boolean {
  return isKill(fault) || fault === "57P01" || fault === "redis-drop";
}

/** SQLSTATE class 22 (data exception) or 23 (integrity): PostgreSQL will not store this row. */
export function isDataError(fault: FaultKind): boolean {
  return fault === "22P05" || fault === "23505";
}

export function faultsFor(point: string): readonly FaultKind[] {
  return point.startsWith("pg:") ? PG_FAULTS : REDIS_FAULTS;
}

export interface RunName {
  shape: string;
  point: string;
  fault: FaultKind;
}

export function runName(run: RunName): string {
  return `${run.shape}/${run.point}/${run.fault}`;
}

/** Parses `<shape>/<point>/<fault>`; points never contain `/`. */
export function parseRunName(name: string): RunName {
  const parts = name.split("/");
  const fault = parts[2] as FaultKind;
  if (parts.length !== 3 || !ALL_FAULTS.includes(fault) || !/^(pg|redis):.+#\d+$/.test(parts[1] ?? "")) {
    throw new Error(
      `run name ${JSON.stringify(name)} is not <shape>/<pg|redis>:<label>#<n>/<fault> (faults: ${ALL_FAULTS.join(", ")})`,
    );
  }
  return { shape: parts[0] as string, point: parts[1] as string, fault };
}

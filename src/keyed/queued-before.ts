import type { LaneItem } from "./keyed-lanes.js";
import { type Queryable, queuedBelow } from "./store/pg-keyed-commands.js";

/** The newest item a sender has just committed on one `(entity, key)`: rows below `seq` precede it. */
export interface KeyBound {
  entity: string;
  key: string;
  seq: bigint;
}

/**
 * The gap fill of docs/keyed.md, "Order", shared by entity commands and keyed workflow admissions:
 * the queued rows of each key committed before the sender's own (lower seq), which a sender that
 * was slow or died between its commit and its enqueue has not handed to Redis yet. Enqueued with
 * the sender's own items, they keep their place ahead of them (a lane is ordered by seq and a
 * known id is left where it is). Complete because inserts of one key are serialized under an
 * advisory lock, so per key every lower seq committed before the sender's row.
 *
 * Throws what the read throws; callers log it and leave the gap to the repair.
 */
export async function queuedBefore(
  db: Queryable,
  bounds: readonly KeyBound[],
  laneOf: (entity: string, key: string) => string,
): Promise<LaneItem[]> {
  if (bounds.length === 0) return [];
  const rows = await queuedBelow(db, bounds);
  return rows.map((r) => ({ id: r.id, lane: laneOf(r.entity, r.key), seq: r.seq, limit: r.keyLimit }));
}

import { type KeyQueueEntry, lineName, positionText } from "../api/executions/key-queue.js";
import { formatDuration } from "./table.js";

/**
 * `tenor runs get`'s "in line" block (docs/keyed.md, "Who holds the key"): per key line the run is
 * queued in, its position (1 is next) and who holds the key, since when and for how long. Empty
 * when the run waits for no key.
 */
export function renderKeyQueue(entries: readonly KeyQueueEntry[] | undefined): string {
  if (!entries || entries.length === 0) return "";
  let text = "in line:\n";
  for (const entry of entries) {
    text += `  - ${lineName(entry)}: position ${positionText(entry.position)}\n`;
    const h = entry.holder;
    text += h
      ? `    held by ${h.description} since ${h.since} (for ${formatDuration(h.heldMs)})\n`
      : "    held by nobody at this moment (the line is moving)\n";
  }
  return text;
}

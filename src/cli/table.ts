import { formatMilliseconds } from "../values/format.js";

/**
 * A plain-text table for people: a header row, then one row per item, columns padded to their
 * widest cell. Cells are single-line (newlines become spaces); an empty list prints `(none)`.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  if (rows.length === 0) return "(none)\n";
  const cells = [headers, ...rows.map((row) => row.map(cellText))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? "").length)));
  return `${cells
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "-";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.replace(/\s+/g, " ");
}

/** `name: value` lines with the names aligned; null values are left out. */
export function renderFields(fields: readonly [string, unknown][]): string {
  const shown = fields.filter(([, value]) => value !== null && value !== undefined);
  const width = Math.max(0, ...shown.map(([name]) => name.length));
  return shown.map(([name, value]) => `${`${name}:`.padEnd(width + 1)} ${cellText(value)}\n`).join("");
}

/** A duration in milliseconds for people; `-` when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "-" : formatMilliseconds(ms);
}

/** `0-3, 7, 9-10`: runs of consecutive shards, at most 12 of them and then `...`. */
export function shardList(shards: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < shards.length; ) {
    let j = i;
    while (j + 1 < shards.length && (shards[j + 1] as number) === (shards[j] as number) + 1) j++;
    runs.push(i === j ? `${shards[i]}` : `${shards[i]}-${shards[j]}`);
    i = j + 1;
  }
  return runs.length > 12 ? `${runs.slice(0, 12).join(", ")}, ...` : runs.join(", ");
}

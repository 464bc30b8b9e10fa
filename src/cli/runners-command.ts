import { parseArgs } from "node:util";
import type { ReplicasStatus } from "../api/platform/replicas-status.js";
import type { ApiClient } from "./api-client.js";
import { type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { formatDuration, renderTable, shardList } from "./table.js";

/**
 * `tenor runners`: every runner and indexer with its heartbeat, shards and turns in use, from the
 * platform status the api serves, then the shards of each role that no one owns. Listing is not
 * a check: it exits 0 whatever it shows (`tenor doctor` fails on no live runner).
 */
export async function runRunnersCommand(
  args: readonly string[],
  api: ApiClient,
  io: CommandIo,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { json: { type: "boolean" } },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0)
    throw new UsageError(`tenor runners takes no argument, got ${JSON.stringify(positionals[0])}`);
  const { replicas } = await api.get<{ replicas: ReplicasStatus }>("/v1/platform/status");
  if (values.json) {
    io.stdout(`${JSON.stringify(replicas, null, 2)}\n`);
    return EXIT.OK;
  }
  io.stdout(
    renderTable(
      ["ROLE", "ID", "LIVE", "STARTED", "LAST HEARTBEAT", "SHARDS", "TURNS", "WORKFLOWS"],
      replicas.instances.map((r) => [
        r.role,
        r.id,
        r.live ? "yes" : "NO",
        r.startedAt,
        `${formatDuration(r.heartbeatAgeMs)} ago`,
        r.shards.length,
        r.capacity === null ? null : `${r.busy ?? 0}/${r.capacity}`,
        r.workflows.length === 0 ? null : r.workflows.length,
      ]),
    ),
  );
  const lines = [`live: ${replicas.live.runner} runner(s), ${replicas.live.indexer} indexer(s)`];
  if (replicas.live.runner === 0) lines.push("no live runner: no workflow advances until one starts");
  for (const { role, shardCount, unowned } of replicas.shards)
    lines.push(
      unowned.length === 0
        ? `${role} shards: all ${shardCount} owned`
        : `${role} shards: ${unowned.length} of ${shardCount} without an owner (${shardList(unowned)})`,
    );
  io.stdout(`\n${lines.join("\n")}\n`);
  return EXIT.OK;
}

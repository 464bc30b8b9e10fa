import { z } from "zod";
import type { ReplicaDirectory } from "../../ownership/replica-directory.js";
import { SHARD_DOMAINS } from "../../ownership/shard-map.js";

const ReplicaSchema = z.object({
  id: z.string().meta({ description: "`<host>:<pid>:<random>`, unique per process start." }),
  role: z.enum(SHARD_DOMAINS),
  host: z.string(),
  pid: z.number().int(),
  startedAt: z.string(),
  lastHeartbeatAt: z.string(),
  heartbeatAgeMs: z.number().int().meta({ description: "By the database's clock." }),
  live: z.boolean().meta({
    description:
      "Heartbeat within `durable.sharding.livenessWindowMs` and its PostgreSQL session still open. A replica " +
      "that stopped heartbeating stays listed with `live: false` for an hour.",
  }),
  shards: z.array(z.number().int()).meta({ description: "Shards whose lock its session holds now." }),
  workflows: z.array(z.string()).meta({ description: "`name@version` of every workflow a runner serves." }),
  busy: z.number().int().nullable().meta({ description: "Turns in progress (null for an indexer)." }),
  capacity: z
    .number()
    .int()
    .nullable()
    .meta({ description: "`durable.runnerConcurrency` (null for an indexer)." }),
});

const ShardCoverageSchema = z.object({
  role: z.enum(SHARD_DOMAINS),
  shardCount: z.number().int(),
  unowned: z.array(z.number().int()).meta({ description: "Shards no live session holds a lock on now." }),
});

export const ReplicasStatusSchema = z
  .object({
    live: z.object({ runner: z.number().int(), indexer: z.number().int() }),
    instances: z.array(ReplicaSchema),
    shards: z.array(ShardCoverageSchema),
  })
  .meta({
    id: "ReplicasStatus",
    description:
      "Who is alive (platform-wide): every runner and indexer with its heartbeat, the shards it owns and its " +
      "turns in use, and per role the shards no one owns (indexer shards only when chains are configured).",
  });

export type ReplicasStatus = z.infer<typeof ReplicasStatusSchema>;

/** The replicas section of the platform status, as the API, the console and `tenor runners` show it. */
export async function readReplicasStatus(
  replicas: ReplicaDirectory,
  shardCount: number,
  /** Whether chains are configured: without one no indexer is needed, so its shards are not reported. */
  indexing: boolean,
): Promise<ReplicasStatus> {
  const domains = SHARD_DOMAINS.filter((domain) => indexing || domain !== "indexer");
  const [instances, ...shards] = await Promise.all([
    replicas.list(),
    ...domains.map((domain) => replicas.coverage(domain, shardCount)),
  ]);
  const liveIn = (role: string) => instances.filter((r) => r.live && r.domain === role).length;
  return {
    live: { runner: liveIn("runner"), indexer: liveIn("indexer") },
    instances: instances.map(({ domain, startedAt, lastHeartbeatAt, workflows, ...replica }) => ({
      ...replica,
      role: domain,
      workflows: [...workflows],
      startedAt: startedAt.toISOString(),
      lastHeartbeatAt: lastHeartbeatAt.toISOString(),
    })),
    shards: shards.map(({ domain, ...coverage }) => ({ role: domain, ...coverage })),
  };
}

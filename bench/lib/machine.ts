import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import type { Redis } from "ioredis";
import type pg from "pg";

/** The machine a run measured, recorded with the results. */
export interface MachineInfo {
  cores: number;
  cpuModel: string;
  totalMemoryBytes: number;
  node: string;
  postgresVersion: string;
  redisVersion: string;
  /** The server's setting (postgresql.conf / ALTER SYSTEM), read on a connection with no override. */
  serverSynchronousCommit: string;
  /** What the benchmark's connections ran with (set per database: always `on` for headline numbers). */
  benchSynchronousCommit: string;
  loadAverageAtStart: number[];
}

export async function readMachineInfo(
  serverPool: pg.Pool,
  benchPool: pg.Pool,
  redis: Redis,
): Promise<MachineInfo> {
  const [version, serverSync, benchSync, info] = await Promise.all([
    serverPool.query<{ server_version: string }>("SHOW server_version"),
    serverPool.query<{ synchronous_commit: string }>("SHOW synchronous_commit"),
    benchPool.query<{ synchronous_commit: string }>("SHOW synchronous_commit"),
    redis.info("server"),
  ]);
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? "unknown",
    totalMemoryBytes: totalmem(),
    node: process.version,
    postgresVersion: version.rows[0]?.server_version ?? "unknown",
    redisVersion: /^redis_version:(\S+)/m.exec(info)?.[1] ?? "unknown",
    serverSynchronousCommit: serverSync.rows[0]?.synchronous_commit ?? "unknown",
    benchSynchronousCommit: benchSync.rows[0]?.synchronous_commit ?? "unknown",
    loadAverageAtStart: loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

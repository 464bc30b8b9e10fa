import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import type { Redis } from "ioredis";
import type pg from "pg";
import { nowMs } from "./concurrency.js";
import type { DeployedRole } from "./deployed-roles.js";

/** How often PostgreSQL's active backends are counted, in ms. */
const SAMPLE_EVERY_MS = 250;
/** Redis commands listed by calls in a window. */
const TOP_COMMANDS = 6;

/**
 * What the machine and the services did over one measured window, to say what bounded a figure.
 * CPU figures are in cores (1.0 = one core busy for the whole window). Redis is shared with other
 * users of the machine, so its figures are the whole instance's.
 */
export interface ResourceUsage {
  seconds: number;
  machine: { cores: number; cpuBusyCores: number; loadavgStart: number[]; loadavgEnd: number[] };
  benchCpuCores: number;
  /** Per role process, in the order given (from each one's `tenor_process_cpu_seconds_total`). */
  roleCpuCores: Record<string, number>;
  postgres: {
    /** Transactions committed per second in the workload's database (pg_stat_database). */
    commitsPerSec: number;
    /**
     * CPU of the workload database's backends (from /proc, so only for a PostgreSQL on this
     * machine; 0 otherwise); the server's own processes (WAL writer, checkpointer) are not in it.
     */
    backendCpuCores: number;
    /** Backends of the workload's database running a statement (pg_stat_activity), sampled. */
    activeMean: number;
    activeMax: number;
    connections: number;
  };
  redis: {
    commandsPerSec: number;
    cpuCores: number;
    /** The most called commands over the window, calls per second. */
    topCommandsPerSec: Record<string, number>;
  };
}

interface Snapshot {
  at: number;
  loadavg: number[];
  machine: { busy: number; total: number };
  bench: NodeJS.CpuUsage;
  roles: number[];
  commits: number;
  /** CPU seconds by backend pid. */
  backends: Map<number, number>;
  redis: { commands: number; cpu: number; byCommand: Map<string, number> };
}

/**
 * Samples PostgreSQL, Redis and CPU while a workload runs: a snapshot at `start` and at `stop`
 * (counters' deltas), and PostgreSQL's active backends every 250 ms in between.
 */
export class ResourceSampler {
  private readonly active: number[] = [];
  private connections = 0;
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly redis: Redis,
    private readonly roles: readonly DeployedRole[],
    private readonly first: Snapshot,
  ) {}

  /**
   * @param pool - a pool on the workload's database (one connection is enough; its own backend
   * is not counted).
   */
  static async start(pool: pg.Pool, redis: Redis, roles: readonly DeployedRole[]): Promise<ResourceSampler> {
    const sampler = new ResourceSampler(pool, redis, roles, await snapshot(pool, redis, roles));
    sampler.timer = setInterval(() => void sampler.countActive(), SAMPLE_EVERY_MS);
    return sampler;
  }

  async stop(): Promise<ResourceUsage> {
    if (this.timer) clearInterval(this.timer);
    const last = await snapshot(this.pool, this.redis, this.roles);
    const seconds = (last.at - this.first.at) / 1000;
    const perSec = (a: number, b: number) => (b - a) / seconds;
    const machineTotal = last.machine.total - this.first.machine.total;
    const cores = cpus().length;
    const bench = last.bench.user + last.bench.system - this.first.bench.user - this.first.bench.system;
    const roleCpuCores: Record<string, number> = {};
    this.roles.forEach((role, i) => {
      roleCpuCores[`${role.role}-${role.pid}`] = perSec(this.first.roles[i] ?? 0, last.roles[i] ?? 0);
    });
    const topCommandsPerSec: Record<string, number> = {};
    [...last.redis.byCommand]
      .map(([name, calls]) => [name, perSec(this.first.redis.byCommand.get(name) ?? 0, calls)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_COMMANDS)
      .forEach(([name, rate]) => {
        topCommandsPerSec[name] = rate;
      });
    return {
      seconds,
      machine: {
        cores,
        cpuBusyCores:
          machineTotal > 0 ? ((last.machine.busy - this.first.machine.busy) / machineTotal) * cores : 0,
        loadavgStart: this.first.loadavg,
        loadavgEnd: last.loadavg,
      },
      benchCpuCores: bench / 1e6 / seconds,
      roleCpuCores,
      postgres: {
        commitsPerSec: perSec(this.first.commits, last.commits),
        backendCpuCores:
          [...last.backends].reduce((sum, [pid, cpu]) => sum + cpu - (this.first.backends.get(pid) ?? 0), 0) /
          seconds,
        activeMean: this.active.length ? this.active.reduce((a, b) => a + b, 0) / this.active.length : 0,
        activeMax: this.active.length ? Math.max(...this.active) : 0,
        connections: this.connections,
      },
      redis: {
        commandsPerSec: perSec(this.first.redis.commands, last.redis.commands),
        cpuCores: perSec(this.first.redis.cpu, last.redis.cpu),
        topCommandsPerSec,
      },
    };
  }

  private async countActive(): Promise<void> {
    const { rows } = await this.pool
      .query<{ active: number; connections: number }>(
        `SELECT count(*) FILTER (WHERE state = 'active')::int AS active, count(*)::int AS connections
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      )
      .catch(() => ({ rows: [] }));
    const row = rows[0];
    if (!row) return;
    this.active.push(row.active);
    this.connections = Math.max(this.connections, row.connections);
  }
}

async function snapshot(pool: pg.Pool, redis: Redis, roles: readonly DeployedRole[]): Promise<Snapshot> {
  const [database, info, roleCpu] = await Promise.all([
    pool.query<{ commits: string; pids: number[] }>(
      // Backends flush these counters about once a second: a window of several seconds is needed.
      `SELECT xact_commit::text AS commits,
              ARRAY(SELECT pid FROM pg_stat_activity WHERE datname = current_database()) AS pids
         FROM pg_stat_database WHERE datname = current_database()`,
    ),
    redis.call("INFO", "stats", "cpu", "commandstats").then(String),
    Promise.all(roles.map((r) => r.cpuSeconds().catch(() => Number.NaN))),
  ]);
  const row = database.rows[0];
  return {
    at: nowMs(),
    loadavg: loadavg(),
    machine: machineCpu(),
    bench: process.cpuUsage(),
    roles: roleCpu,
    commits: Number(row?.commits ?? 0),
    backends: new Map((row?.pids ?? []).map((pid) => [pid, processCpuSeconds(pid)])),
    redis: redisCounters(info),
  };
}

let clockTicks: number | null = null;

/** User + system CPU seconds of a process on this machine, from /proc/<pid>/stat; 0 when unreadable. */
function processCpuSeconds(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
    clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / clockTicks;
  } catch {
    return 0;
  }
}

/** Busy and total jiffies of all cores together, from /proc/stat (zeros off Linux). */
function machineCpu(): { busy: number; total: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

function redisCounters(info: string): Snapshot["redis"] {
  const field = (name: string) => Number(info.match(new RegExp(`^${name}:([0-9.]+)`, "m"))?.[1] ?? 0);
  const byCommand = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    byCommand.set(match[1] as string, Number(match[2]));
  return {
    commands: field("total_commands_processed"),
    cpu: field("used_cpu_sys") + field("used_cpu_user"),
    byCommand,
  };
}

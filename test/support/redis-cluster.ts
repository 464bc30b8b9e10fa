import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort, spawnProcess, type TestProcess, waitUntil } from "./processes.js";

const run = promisify(execFile);

/** A local Redis Cluster of the test's own: three masters, no replicas, every slot covered. */
export interface RedisClusterHandle {
  /** A seed node's URL (`redis://127.0.0.1:<port>`): Tenor discovers the others from it. */
  url: string;
  ports: number[];
  /** Kills every node and removes their directories. */
  stop(): Promise<void>;
}

/**
 * Starts three `redis-server --cluster-enabled yes` nodes on free ports (client and bus ports
 * both chosen free: a client port near 65535 has no room for the default bus port + 10000),
 * joins them with `redis-cli --cluster create` and waits until every node reports
 * `cluster_state:ok`.
 */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const nodes: { port: number; dir: string; server: TestProcess }[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const busPort = await freePort();
      const dir = mkdtempSync(path.join(tmpdir(), "tenor-cluster-"));
      const server = spawnProcess(`redis-cluster :${port}`, "redis-server", [
        "--port",
        String(port),
        "--cluster-port",
        String(busPort),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        path.join(dir, "nodes.conf"),
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--maxmemory-policy",
        "noeviction",
      ]);
      nodes.push({ port, dir, server });
      await server.waitFor(/Ready to accept connections/, 15_000);
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"]);
    for (const { port } of nodes) {
      await waitUntil(`cluster node ${port} ok`, async () => {
        const { stdout } = await run("redis-cli", ["-p", String(port), "cluster", "info"]);
        return stdout.includes("cluster_state:ok");
      });
    }
  } catch (error) {
    await stopNodes(nodes);
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${nodes[0]?.port}`,
    ports: nodes.map((n) => n.port),
    stop: () => stopNodes(nodes),
  };
}

async function stopNodes(nodes: { dir: string; server: TestProcess }[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.server.kill()));
  for (const { dir } of nodes) rmSync(dir, { recursive: true, force: true });
}

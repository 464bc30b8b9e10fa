import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../test/support/ports.js";
import { sleep } from "./concurrency.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The secret's variable and value: anvil's second dev account (a public key of a public mnemonic). */
const SIGNER_KEY_ENV = "BENCH_CHAIN_SIGNER_KEY";
const SIGNER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/**
 * The production runner role (`workers/main.ts` with DAPI_ROLE=runner) in its own process, configured
 * with one chain and a local signer `bench` of organisation `bench`. Resolves once the runner owns
 * every shard (its confirmation watcher examines only executions of shards it owns).
 */
export async function startRunnerRole(options: {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  chain: { id: number; rpcUrl: string; watchIntervalMs: number };
  timeoutMs?: number;
}): Promise<{ stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "tenor-bench-chain-"));
  const configPath = join(dir, "runner.yaml");
  const shardCount = 64;
  writeFileSync(
    configPath,
    JSON.stringify({
      logLevel: "error",
      durable: {
        sharding: { shardCount },
        confirmationWatcher: { intervalMs: options.chain.watchIntervalMs },
      },
      chains: [
        { id: options.chain.id, name: "bench", rpcUrls: [options.chain.rpcUrl], finality: { depth: 1 } },
      ],
      signers: [{ id: "bench", kind: "local", orgId: "bench", privateKey: { env: SIGNER_KEY_ENV } }],
    }),
  );
  const healthPort = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "workers/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DAPI_ROLE: "runner",
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      TENOR_REDIS_PREFIX: options.prefix,
      TENOR_CONFIG: configPath,
      TENOR_RUNNER_HEALTH_PORT: String(healthPort),
      [SIGNER_KEY_ENV]: SIGNER_KEY,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await ownsEveryShard(child, healthPort, shardCount, options.timeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}

async function ownsEveryShard(child: ChildProcess, port: number, shards: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const pattern = /^tenor_shards_owned\{[^}]*domain="runner"[^}]*\} (\d+)/m;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the runner role exited with ${child.exitCode} while starting`);
    const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
      (r) => (r.ok ? r.text() : ""),
      () => "",
    );
    if (Number(text.match(pattern)?.[1] ?? 0) >= shards) return;
    await sleep(100);
  }
  throw new Error(`the runner role did not own all ${shards} shards within ${timeoutMs} ms`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

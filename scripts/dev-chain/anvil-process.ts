import { type ChildProcess, spawn } from "node:child_process";
import { anvilBinary } from "./anvil-binary.js";

/** A running anvil started by a dev tool (the demo chain, the benchmark). */
export interface AnvilProcess {
  readonly url: string;
  readonly chainId: number;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts anvil on 127.0.0.1:`port` (0: a free port the OS picks; automine: a block per
 * transaction) and resolves once it listens; rejects with its last output when it exits first or
 * takes longer than `timeoutMs`.
 */
export async function startAnvilProcess(options: {
  port: number;
  chainId: number;
  timeoutMs?: number;
  /**
   * Keeps the chain in this file across runs: loaded at start when present, written every second
   * and on exit. Unset: every start is a fresh chain.
   */
  statePath?: string;
}): Promise<AnvilProcess> {
  const args = ["--host", "127.0.0.1", "--port", String(options.port), "--chain-id", String(options.chainId)];
  if (options.statePath) args.push("--state", options.statePath, "--state-interval", "1");
  const node = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let port: number;
  try {
    port = await listening(node, options.timeoutMs ?? 20_000);
  } catch (error) {
    node.kill("SIGKILL");
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    chainId: options.chainId,
    async stop() {
      if (node.exitCode !== null || node.signalCode !== null) return;
      const exited = new Promise((resolve) => node.once("exit", resolve));
      node.kill("SIGTERM");
      await exited;
    },
  };
}

/** Resolves with the port anvil reports in its "Listening on <host>:<port>" line. */
function listening(node: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => reject(new Error(`anvil did not start within ${timeoutMs} ms: ${output.slice(-500)}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = output.match(/Listening on \S+:(\d+)/);
      if (!match) return;
      clearTimeout(timer);
      node.stdout?.off("data", onData);
      // Keep draining anvil's output so a full pipe never blocks it.
      node.stdout?.resume();
      node.stderr?.resume();
      resolve(Number(match[1]));
    };
    node.stdout?.on("data", onData);
    node.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    node.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    node.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with ${code} before listening: ${output.slice(-500)}`));
    });
  });
}

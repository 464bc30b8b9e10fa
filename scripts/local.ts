/**
 * `npm run local`: runs the api, runner and indexer roles side by side for development. This is
 * the only place the supervisor touches `process`: argv, env, the TTY check and signals are read
 * here and passed into `startSupervisor` as plain values.
 */
import process from "node:process";
import { loadConfig } from "../src/config/load-config.js";
import { toTenorError } from "../src/errors/tenor-error.js";
import { type DevChain, devChainPort, needsDevChain, startDevChain } from "./dev-chain/dev-chain.js";
import { type Supervisor, startSupervisor } from "./local/supervisor.js";
import {
  LOCAL_USAGE,
  parseLocalCommandLine,
  roleCommandFor,
  rolePortsFromConfig,
} from "./local/supervisor-cli.js";
import { SupervisorError, SupervisorErrorCode } from "./local/supervisor-errors.js";
import { shouldUseColour } from "./local/supervisor-lines.js";

/** Exit code for a command-line mistake, distinct from a role failing (1). */
const USAGE_EXIT_CODE = 2;

async function main(): Promise<number> {
  let supervisor: Supervisor;
  let devChain: DevChain | undefined;
  try {
    const cli = parseLocalCommandLine(process.argv.slice(2));
    if (cli.help) {
      process.stdout.write(LOCAL_USAGE);
      return 0;
    }
    // No chain configured: a local anvil is the demo chain (TENOR_DEV_CHAIN=off opts out).
    if (needsDevChain(process.env)) {
      devChain = await startDevChain({ env: process.env, port: devChainPort(process.env) });
      process.stderr.write(
        `dev chain: anvil at ${devChain.url} (chain ${devChain.chainId}), signer "demo" for organisation demo, asset template demo-bond with resolver ${devChain.resolver}\n`,
      );
    }
    const env = devChain?.env ?? process.env;
    supervisor = startSupervisor({
      roles: cli.roles,
      command: roleCommandFor(process.execPath, cli.entry),
      env,
      stdout: process.stdout,
      stderr: process.stderr,
      colour: shouldUseColour(process.stdout, process.env),
      graceMs: cli.graceMs,
      readiness: cli.waitReady
        ? { ports: rolePortsFromConfig(loadConfig({ env })), timeoutMs: cli.readyTimeoutMs }
        : undefined,
    });
  } catch (thrown) {
    await devChain?.stop();
    const error = toTenorError(thrown);
    process.stderr.write(`${error.code}: ${error.message}\n`);
    if (error.code === "CONFIG_INVALID") return USAGE_EXIT_CODE;
    if (error instanceof SupervisorError && error.code === SupervisorErrorCode.invalidOptions) {
      process.stderr.write(`\n${LOCAL_USAGE}`);
      return USAGE_EXIT_CODE;
    }
    return 1;
  }

  // First signal: graceful stop. Second: the person at the keyboard means it, so kill now.
  let signalsSeen = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signalsSeen += 1;
    if (signalsSeen === 1) supervisor.stop(`received ${signal}`);
    else supervisor.kill(`received ${signal} again`);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) process.on(signal, onSignal);
  // `npm run local | head` closes our stdout; an unhandled EPIPE would kill the supervisor and
  // orphan the roles, so stop them instead.
  const onOutputError = () => supervisor.stop("output closed");
  process.stdout.on("error", onOutputError);
  process.stderr.on("error", onOutputError);

  const outcome = await supervisor.done;
  for (const signal of signals) process.off(signal, onSignal);
  await devChain?.stop();
  return outcome.exitCode;
}

// exitCode rather than exit(): let stdout and stderr drain so the last lines are not lost.
process.exitCode = await main();

/**
 * The quick-start demo: starts `demo.asset-issue` against running roles, approves it when it
 * waits for approval, and prints every status it passes through and its journal.
 * Usage: node --import tsx scripts/demo.ts [--symbol TNR] [--reject]
 */
import { ALL_WORKFLOWS } from "../flows/index.js";
import { loadConfig } from "../src/config/load-config.js";
import { WorkflowRegistry } from "../src/engine/registry.js";
import { createLogger } from "../src/observability/logger.js";
import { connectDependencies } from "../src/roles/dependencies.js";
import { createExecutionClient } from "../src/runtime/create-execution-client.js";

const args = process.argv.slice(2);
const symbol = args.includes("--symbol")
  ? (args[args.indexOf("--symbol") + 1] ?? "TNR")
  : `TNR${Date.now() % 100000}`;
const reject = args.includes("--reject");

const config = loadConfig({ env: process.env });
const logger = createLogger({ level: "warn" }).child({ component: "demo" });
const deps = await connectDependencies(config, "api");
const { client, close } = createExecutionClient({
  pool: deps.pool,
  redis: deps.redis,
  prefix: config.redisPrefix,
  registry: new WorkflowRegistry(ALL_WORKFLOWS),
  logger,
});

const say = (line: string) => process.stdout.write(`${line}\n`);
try {
  const { executionId } = await client.start({
    workflow: "demo.asset-issue",
    input: { symbol, approvalTimeout: "5m", settle: "2s" },
    idempotencyKey: `demo-${symbol}`,
    orgId: "demo",
  });
  say(`execution ${executionId} (demo.asset-issue, symbol ${symbol})`);
  let last = "";
  let approved = false;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const view = await client.view(executionId, "demo");
    const waits = (view.waitingFor ?? [])
      .map((w) => `${w.kind}:${w.name}${w.until ? ` until ${w.until}` : ""}`)
      .join(", ");
    const line = `${view.status}${waits ? ` — waiting for ${waits}` : ""}${view.progress ? ` — progress ${JSON.stringify(view.progress)}` : ""}`;
    if (line !== last) say(`  status: ${line}`);
    last = line;
    const waitsForApproval = view.waitingFor?.some((w) => w.kind === "signal" && w.name === "approval");
    if (view.status === "waiting" && waitsForApproval && !approved) {
      await client.signal(
        executionId,
        "approval",
        { approved: !reject, approver: "demo-approver" },
        { orgId: "demo", idempotencyKey: "demo-approval" },
      );
      say(`  signal: approval (${reject ? "rejected" : "approved"}) by demo-approver`);
      approved = true;
    }
    if (view.status === "completed" || view.status === "failed") {
      say(
        view.status === "completed"
          ? `  output: ${JSON.stringify(view.output)}`
          : `  failure: ${JSON.stringify(view.failure)}`,
      );
      break;
    }
    if (Date.now() > deadline)
      throw new Error(`demo did not finish within 60 s (last status ${view.status}); is a runner running?`);
    await new Promise((r) => setTimeout(r, 100));
  }
  say("  journal:");
  for (const entry of await client.journal(executionId, "demo")) {
    say(
      `    #${entry.position} ${entry.kind.padEnd(9)} ${entry.name.padEnd(16)} ${entry.state.padEnd(7)} ${JSON.stringify(entry.error ?? entry.result)}`,
    );
  }
} finally {
  await close();
  await deps.close();
}

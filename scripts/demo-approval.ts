/**
 * The approval demo (no chain), through the Platform API of a running api role: issues API keys for org
 * "demo" (integrator, approver, operator) with the same function as `npm run tenor -- keys create`,
 * starts `demo.asset-issue`, approves it as a different identity when it waits for approval, and
 * prints every status it passes through and its journal.
 * Usage: node --import tsx scripts/demo-approval.ts [--symbol TNR] [--reject]
 */
import { demoClient } from "./demo-client.js";

const args = process.argv.slice(2);
const symbol = args.includes("--symbol")
  ? (args[args.indexOf("--symbol") + 1] ?? "TNR")
  : `TNR${Date.now() % 100000}`;
const reject = args.includes("--reject");

const { keys, call } = await demoClient().catch((error: Error) => {
  // Named, not a stack trace: the usual cause is a quick start that is not running.
  process.stderr.write(`demo: ${error.message}\n`);
  process.exit(1);
});
const integrator = keys.integrator;
const approver = keys.approver;
const operator = keys.operator;

interface Wait {
  kind: string;
  name: string;
  until: string | null;
  details?: { paramsHash?: string; params?: unknown };
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const started = await call(
  "POST",
  "/v1/workflows/demo.asset-issue/executions",
  integrator,
  { symbol, approvalTimeout: "5m", settle: "2s" },
  { "idempotency-key": `demo-${symbol}`, prefer: "wait=1" },
);
const executionId = started.json.id as string;
say(`execution ${executionId} (demo.asset-issue, symbol ${symbol}) — ${started.status} ${started.location}`);
let last = "";
let voted = false;
const deadline = Date.now() + 60_000;
for (;;) {
  const { json: view } = await call("GET", `/v1/executions/${executionId}`, integrator);
  const waits = (view.waitingFor as Wait[])
    .map((w) => `${w.kind}:${w.name}${w.until ? ` until ${w.until}` : ""}`)
    .join(", ");
  const line = `${view.status}${waits ? ` — waiting for ${waits}` : ""}${view.progress ? ` — progress ${JSON.stringify(view.progress)}` : ""}`;
  if (line !== last) say(`  status: ${line}`);
  last = line;
  const approval = (view.waitingFor as Wait[]).find((w) => w.kind === "approval" && w.name === "issue");
  if (view.status === "waiting" && approval && !voted) {
    say(`  approval requested for ${JSON.stringify(approval.details?.params)}`);
    const vote = await call("POST", `/v1/executions/${executionId}/approvals/issue`, approver, {
      decision: reject ? "reject" : "approve",
      paramsHash: approval.details?.paramsHash,
      ...(reject ? { reason: "demo rejection" } : {}),
    });
    say(
      `  approval: ${vote.json.decision} by demo-approver (${vote.json.approvals}/${vote.json.quorum}, ${vote.json.outcome})`,
    );
    voted = true;
  }
  if (view.status === "completed" || view.status === "failed") {
    say(
      view.status === "completed"
        ? `  output: ${JSON.stringify(view.result)}`
        : `  failure: ${JSON.stringify(view.failure)}`,
    );
    break;
  }
  if (Date.now() > deadline)
    throw new Error(`demo did not finish within 60 s (last status ${view.status}); is a runner running?`);
  await new Promise((r) => setTimeout(r, 100));
}
say("  journal:");
const { json: journal } = await call("GET", `/v1/executions/${executionId}/steps`, operator);
for (const entry of journal.steps) {
  say(
    `    #${entry.position} ${entry.kind.padEnd(9)} ${entry.name.padEnd(16)} ${entry.state.padEnd(7)} ${JSON.stringify(entry.error ?? entry.result)}`,
  );
}

/**
 * The quick-start demo, through the Platform API of running roles on the dev chain (`npm run
 * local` starts anvil with the `demo-bond` asset template): issues API keys for organisation
 * "demo" with the same function as `npm run tenor -- keys create`, starts `asset.create` for a
 * bond, and prints each milestone with its transaction hash, the asset paused → active, and the
 * journal, then exports the execution's signed evidence. The organisation comes from the key; the
 * body names only the template and the bond.
 * Usage: node --import tsx scripts/demo.ts [--symbol BND1] [--template demo-bond]
 */
import { demoClient } from "./demo-client.js";

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const symbol = option("--symbol") ?? `BND${Date.now() % 100000}`;
const templateId = option("--template") ?? "demo-bond";

const { keys, call } = await demoClient().catch((error: Error) => {
  // Named, not a stack trace: the usual cause is a quick start that is not running.
  process.stderr.write(`demo: ${error.message}\n`);
  process.exit(1);
});
const integrator = keys.integrator;
const operator = keys.operator;

interface Progress {
  phase?: string;
  status?: string;
  assetId?: string;
  hashes?: { step: string; hash: string }[];
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const input = { templateId, name: `Demo Bond ${symbol}`, symbol, initialPrice: "100.00" };
const started = await call("POST", "/v1/workflows/asset.create/executions", integrator, input, {
  "idempotency-key": `demo-asset-${symbol}`,
  prefer: "wait=1",
});
const executionId = started.json.id as string;
say(
  `execution ${executionId} (asset.create, ${templateId} ${symbol}) — ${started.status} ${started.location}`,
);
let phase = "";
let assetStatus = "";
const printed = new Set<string>();
const deadline = Date.now() + 120_000;
for (;;) {
  const { json: view } = await call("GET", `/v1/executions/${executionId}`, integrator);
  const progress = (view.progress ?? {}) as Progress;
  for (const { step, hash } of progress.hashes ?? []) {
    if (printed.has(step)) continue;
    printed.add(step);
    say(`  milestone: ${step.padEnd(12)} ${hash}`);
  }
  if (progress.status && progress.status !== assetStatus) {
    say(
      `  asset ${progress.assetId ?? "(unassigned)"}: ${assetStatus ? `${assetStatus} → ` : ""}${progress.status}`,
    );
    assetStatus = progress.status;
  }
  if (progress.phase && progress.phase !== phase) {
    phase = progress.phase;
    say(`  phase: ${phase} (${view.status})`);
  }
  if (view.status === "completed" || view.status === "failed") {
    say(
      view.status === "completed"
        ? `  output: ${JSON.stringify(view.result)}`
        : `  failure: ${JSON.stringify(view.failure)}`,
    );
    if (view.status === "failed") process.exitCode = 1;
    break;
  }
  if (Date.now() > deadline) {
    throw new Error(
      `asset creation did not finish within 120 s (last status ${view.status}); is a runner running?`,
    );
  }
  await new Promise((r) => setTimeout(r, 100));
}
say("  journal:");
const { json: journal } = await call("GET", `/v1/executions/${executionId}/steps`, operator);
for (const entry of journal.steps) {
  say(`    #${entry.position} ${entry.kind.padEnd(9)} ${entry.name.padEnd(22)} ${entry.state}`);
}
// The signed evidence export an auditor receives (docs/console.md, "Evidence export"); the quick
// start signs it with the public development key (config/dev/evidence-signing-key.pem).
const evidence = await call("GET", `/v1/executions/${executionId}/evidence`, operator);
if (evidence.status === 200) {
  const records = evidence.json.records as unknown[];
  const signature = evidence.json.signature as { keyId: string };
  say(
    `  evidence: ${evidence.json.format}, ${records.length} hash-chained records, head ${String(evidence.json.head).slice(0, 12)}…, signed by key ${signature.keyId.slice(0, 12)}… (check it offline: npm run tenor -- verify <file>)`,
  );
} else {
  say(`  evidence: ${evidence.status} ${JSON.stringify(evidence.json)}`);
  process.exitCode = 1;
}

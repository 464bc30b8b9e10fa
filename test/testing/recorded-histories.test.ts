import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { demoAssetIssue, provisionDemoWallet } from "../../flows/demo-asset-issue.js";
import { ALL_WORKFLOWS } from "../../flows/index.js";
import { runCli } from "../../src/cli/cli.js";
import { readHistoryFile } from "../../src/cli/replay-command.js";
import { WorkflowRegistry } from "../../src/engine/registry.js";
import { defineWorkflow } from "../../src/engine/workflow.js";
import { replayHistory, replayHistoryFiles } from "../../src/testing/index.js";
import { HISTORY_FIXTURES } from "../support/test-kit.js";
import { TUTORIAL_WORKFLOWS } from "../tutorial/invoice-payout.js";

/**
 * The recorded histories of the repository's own flows (test/fixtures/histories, recorded by
 * really running them with TENOR_RECORD_HISTORIES=1) replay against the current code, so a change
 * that breaks runs in flight fails `npm test`; and a planted change does break them.
 */
const CODE = [...ALL_WORKFLOWS, ...TUTORIAL_WORKFLOWS];
const COMPLETED = path.join(HISTORY_FIXTURES, "demo-asset-issue-v2-completed.json");
const PLANTED = path.resolve(HISTORY_FIXTURES, "../replay/planted-change.ts");

function cliIo() {
  const out: string[] = [];
  return { out, io: { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t) } };
}

describe("recorded histories of the repository's flows", () => {
  it("all replay against the current code", async () => {
    const files = readdirSync(HISTORY_FIXTURES).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThanOrEqual(5);
    const findings = await replayHistoryFiles([HISTORY_FIXTURES], CODE);
    expect(findings.map((f) => [path.basename(f.file), f.replay.ok ? "ok" : f.replay.divergence])).toEqual(
      files.sort().map((f) => [f, "ok"]),
    );
  });

  it("diverge at the first changed position when a step is inserted without a new version", async () => {
    const history = await readHistoryFile(COMPLETED);
    const { workflows } = await import(PLANTED);
    const replay = await replayHistory(history, new WorkflowRegistry(workflows));
    expect(replay).toMatchObject({
      ok: false,
      divergence: {
        position: 0,
        recorded: expect.stringMatching(/^step "feed\.deploy"/),
        found: expect.stringMatching(/^step "kyc\.check"/),
      },
    });
  });

  it("diverge when the code now returns another output", async () => {
    const history = await readHistoryFile(COMPLETED);
    const changed = defineWorkflow({
      name: demoAssetIssue.name,
      version: demoAssetIssue.version,
      input: demoAssetIssue.input,
      output: z.unknown(),
      async run(ctx, input) {
        const output = await demoAssetIssue.run(ctx, input);
        return { ...output, approvedBy: "someone else" };
      },
    });
    const replay = await replayHistory(history, new WorkflowRegistry([changed, provisionDemoWallet]));
    expect(replay.ok).toBe(false);
    expect(replay.ok ? null : replay.divergence.position).toBeNull();
    expect(replay.ok ? "" : replay.divergence.found).toMatch(/someone else/);
  });

  it("tenor replay exits 0 on the fixtures and 1 with the first divergence against the planted change", async () => {
    const ok = cliIo();
    const workflows = async () => CODE;
    expect(await runCli(["replay", HISTORY_FIXTURES], { env: {}, io: ok.io, workflows })).toBe(0);
    expect(ok.out.join("")).toMatch(/replayed, 0 diverged/);
    const broken = cliIo();
    expect(
      await runCli(["replay", COMPLETED, "--against", PLANTED], { env: {}, io: broken.io, workflows }),
    ).toBe(1);
    expect(broken.out.join("")).toMatch(
      /DIVERGES demo\.asset-issue v2 .* at position 0: recorded step "feed\.deploy".*, the code now gives step "kyc\.check"/,
    );
  });
});

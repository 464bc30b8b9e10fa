import { describe, expect, it } from "vitest";
import { runTenor } from "./support/run-cli.js";

/**
 * `--help` on every command and subcommand, and a usage error printing that command's usage only,
 * as the real CLI process (scripts/tenor.ts) does them. No environment: help needs none.
 */
const COMMANDS = {
  runs: [
    "runs",
    "runs list",
    "runs get",
    "runs steps",
    "runs signal",
    "runs approve",
    "runs cancel",
    "runs resume",
  ],
  schedules: [
    "schedules",
    "schedules list",
    "schedules status",
    "schedules pause",
    "schedules resume",
    "schedules trigger",
  ],
  contracts: ["contracts", "contracts add", "contracts list"],
  assets: ["assets", "assets mint"],
  keys: ["keys", "keys create", "keys list", "keys revoke"],
  doctor: ["doctor"],
  compat: ["compat"],
  verify: ["verify"],
} as const;

/** The first word of each command's lines in the full usage, to find another command's lines. */
const others = (command: string) => Object.keys(COMMANDS).filter((c) => c !== command);

describe("tenor --help", () => {
  it("every command and subcommand answers --help with its own usage on stdout and exit 0", async () => {
    const lines = Object.entries(COMMANDS).flatMap(([command, forms]) =>
      forms.map((form, i) => ({ command, args: [...form.split(" "), i === 0 ? "-h" : "--help"] })),
    );
    const runs = await Promise.all(
      lines.map(async (line) => ({ ...line, run: await runTenor(line.args, {}) })),
    );
    for (const { command, args, run } of runs) {
      const what = `tenor ${args.join(" ")}`;
      expect(run.code, `${what}: ${run.stderr}`).toBe(0);
      expect(run.stdout, what).toMatch(new RegExp(`^Usage:\\n  tenor ${command} `));
      for (const other of others(command)) expect(run.stdout, what).not.toContain(`tenor ${other} `);
    }
  }, 60_000);

  it("a usage error prints that command's usage only, exit 2", async () => {
    const [keys, runs, verify] = await Promise.all([
      runTenor(["keys", "create", "--bogus"], {}),
      runTenor(["runs", "frobnicate"], { TENOR_API_URL: "http://127.0.0.1:9", TENOR_API_KEY: "tnr_x" }),
      runTenor(["verify"], {}),
    ]);
    for (const [command, run] of [
      ["keys", keys],
      ["runs", runs],
      ["verify", verify],
    ] as const) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^tenor: .+\n\nUsage:\n/);
      expect(run.stderr).toContain(`tenor ${command} `);
      for (const other of others(command)) expect(run.stderr, command).not.toContain(`tenor ${other} `);
    }
    // Without a command: the whole usage.
    const none = await runTenor([], {});
    expect(none.code).toBe(2);
    for (const command of Object.keys(COMMANDS)) expect(none.stderr).toContain(`tenor ${command} `);
  }, 60_000);
});

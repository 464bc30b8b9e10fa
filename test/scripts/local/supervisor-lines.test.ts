import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  parseLocalCommandLine,
  roleCommandFor,
  rolePortsFromConfig,
} from "../../../scripts/local/supervisor-cli.js";
import {
  LineSplitter,
  labelWidth,
  prefixLine,
  shouldUseColour,
  supervisorLine,
} from "../../../scripts/local/supervisor-lines.js";
import { resolveSupervisorOptions } from "../../../scripts/local/supervisor-options.js";

const ESC = "\u001b[";
const plain = { width: 10, colour: false };
const coloured = { width: 10, colour: true };

describe("line prefixes", () => {
  it("pads every label to one column so roles line up", () => {
    expect(labelWidth(["api", "runner"])).toBe("supervisor".length);
    expect(labelWidth(["a-very-long-role"])).toBe(16);
    expect(prefixLine("api", "hello", plain)).toBe("api        | hello\n");
    expect(prefixLine("indexer", "", plain)).toBe("indexer    | \n");
  });

  it("emits no escape codes without colour", () => {
    for (const label of ["api", "runner", "indexer", "supervisor"]) {
      expect(prefixLine(label, "x", plain)).not.toContain(ESC);
    }
    expect(supervisorLine("crashed", "error", plain)).toBe("supervisor | crashed\n");
  });

  it("gives each role its own colour and resets before the text", () => {
    const colours = ["api", "runner", "indexer"].map((role) => {
      const line = prefixLine(role, "text", coloured);
      expect(line).toMatch(new RegExp(`^\\u001b\\[\\d+m${role} +\\|\\u001b\\[0m text\\n$`));
      return line.slice(0, line.indexOf("m") + 1);
    });
    expect(new Set(colours).size).toBe(3);
  });

  it("prints supervisor errors in red so a crash stands out", () => {
    expect(supervisorLine("role runner exited", "error", coloured)).toContain(`${ESC}31mrole runner exited`);
    expect(supervisorLine("started", "info", coloured)).not.toContain(`${ESC}31m`);
  });
});

describe("shouldUseColour", () => {
  it("colours a terminal only, and never when NO_COLOR is set and non-empty", () => {
    expect(shouldUseColour({ isTTY: true }, {})).toBe(true);
    expect(shouldUseColour({ isTTY: false }, {})).toBe(false);
    expect(shouldUseColour({}, {})).toBe(false);
    expect(shouldUseColour({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(shouldUseColour({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
  });
});

describe("LineSplitter", () => {
  it("holds a partial line until its newline arrives", () => {
    const splitter = new LineSplitter();
    expect(splitter.push("one\ntw")).toEqual(["one"]);
    expect(splitter.push("o")).toEqual([]);
    expect(splitter.push("\nthree\n\n")).toEqual(["two", "three", ""]);
    expect(splitter.flush()).toBeUndefined();
  });

  it("strips CRLF and returns an unterminated last line on flush", () => {
    const splitter = new LineSplitter();
    expect(splitter.push("windows\r\nlast")).toEqual(["windows"]);
    expect(splitter.flush()).toBe("last");
    expect(splitter.flush()).toBeUndefined();
  });

  it("keeps a multi-byte character split across chunks intact", () => {
    const bytes = Buffer.from("café ✓\n", "utf8");
    const splitter = new LineSplitter();
    const cut = bytes.indexOf(Buffer.from("✓")) + 1;
    expect(splitter.push(bytes.subarray(0, cut))).toEqual([]);
    expect(splitter.push(bytes.subarray(cut))).toEqual(["café ✓"]);
  });
});

describe("supervisor options", () => {
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const base = { command: { file: "node", args: [] }, env: {}, stdout: sink, stderr: sink };

  it("defaults to all three roles, a 10 s grace and no readiness polling", () => {
    const resolved = resolveSupervisorOptions(base);
    expect(resolved.roles).toEqual(["api", "runner", "indexer"]);
    expect(resolved.graceMs).toBe(10_000);
    expect(resolved.readiness).toBeUndefined();
  });

  it("refuses unknown, repeated or no roles, naming the allowed ones", () => {
    expect(() => resolveSupervisorOptions({ ...base, roles: ["all"] })).toThrow(
      'unknown role "all"; allowed roles are api, runner, indexer',
    );
    expect(() => resolveSupervisorOptions({ ...base, roles: ["api", "api"] })).toThrow("listed twice");
    expect(() => resolveSupervisorOptions({ ...base, roles: [] })).toThrow("no roles given");
    expect(() => resolveSupervisorOptions({ ...base, graceMs: 0 })).toThrow("graceMs must be a positive");
  });

  it("builds one /readyz URL per started role", () => {
    const ports = { api: 3000, runner: 3001, indexer: 3002 };
    const resolved = resolveSupervisorOptions({ ...base, roles: ["runner"], readiness: { ports } });
    expect([...resolved.readiness!.urls]).toEqual([["runner", "http://127.0.0.1:3001/readyz"]]);
    expect(() => resolveSupervisorOptions({ ...base, readiness: { ports: { ...ports, api: 0 } } })).toThrow(
      "readiness port of role api",
    );
  });
});

describe("npm run local command line", () => {
  it("parses flags with defaults", () => {
    expect(parseLocalCommandLine([])).toEqual({
      roles: ["api", "runner", "indexer"],
      entry: "workers/main.ts",
      waitReady: false,
      readyTimeoutMs: 60_000,
      graceMs: 10_000,
      help: false,
    });
    const cli = parseLocalCommandLine(["--roles", "api, runner", "--wait-ready", "--grace-ms", "500"]);
    expect(cli).toMatchObject({ roles: ["api", "runner"], waitReady: true, graceMs: 500 });
  });

  it("refuses unknown flags and malformed numbers", () => {
    expect(() => parseLocalCommandLine(["--role", "api"])).toThrow(/role/);
    expect(() => parseLocalCommandLine(["--grace-ms", "soon"])).toThrow(
      "--grace-ms must be a positive whole",
    );
  });

  it("reads health ports from the roles' own variables", () => {
    expect(
      rolePortsFromConfig({
        api: { port: 3000 },
        runner: { healthPort: 4001 },
        indexer: { healthPort: 3002 },
      }),
    ).toEqual({
      api: 3000,
      runner: 4001,
      indexer: 3002,
    });
  });

  it("runs TypeScript through tsx and built JavaScript on plain node", () => {
    expect(roleCommandFor("/node", "workers/main.ts")).toEqual({
      file: "/node",
      args: ["--import", "tsx", "workers/main.ts"],
    });
    expect(roleCommandFor("/node", "dist/workers/main.js")).toEqual({
      file: "/node",
      args: ["dist/workers/main.js"],
    });
  });
});

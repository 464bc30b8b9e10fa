import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { planSystemPackages, SYSTEM_PACKAGES } from "../../scripts/test-setup/system-packages.js";

/** The test command's setup step decides from the machine's facts; apt is never run here. */

const only =
  (...present: string[]) =>
  (path: string) =>
    present.includes(path);
const ALL = SYSTEM_PACKAGES.map((p) => p.binary);

describe("the test setup's system packages", () => {
  it("names chromium and pgbouncer by the binaries the tests run", () => {
    expect(SYSTEM_PACKAGES).toEqual([
      { name: "chromium", binary: "/usr/bin/chromium" },
      { name: "pgbouncer", binary: "/usr/sbin/pgbouncer" },
    ]);
  });

  it("does nothing when every binary exists, root or not", () => {
    for (const isRoot of [true, false]) {
      expect(planSystemPackages({ hasBinary: only(...ALL), isRoot, hasAptGet: true })).toEqual({
        action: "none",
      });
    }
  });

  it("installs only the missing packages through apt when root with apt-get", () => {
    expect(
      planSystemPackages({ hasBinary: only("/usr/sbin/pgbouncer"), isRoot: true, hasAptGet: true }),
    ).toEqual({
      action: "install",
      commands: [
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
      ],
    });
    expect(planSystemPackages({ hasBinary: only(), isRoot: true, hasAptGet: true })).toEqual({
      action: "install",
      commands: [
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", "chromium", "pgbouncer"],
      ],
    });
  });

  it("stops with one line naming what is missing and the command that installs it when not root", () => {
    const plan = planSystemPackages({ hasBinary: only("/usr/bin/chromium"), isRoot: false, hasAptGet: true });
    expect(plan).toEqual({
      action: "stop",
      message:
        "test setup: missing pgbouncer (/usr/sbin/pgbouncer); install with: sudo apt-get install -y --no-install-recommends pgbouncer",
    });
  });

  it("stops, saying there is no apt-get, on a root machine without it", () => {
    const plan = planSystemPackages({ hasBinary: only(), isRoot: true, hasAptGet: false });
    expect(plan.action).toBe("stop");
    const message = (plan as { message: string }).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toContain("missing chromium (/usr/bin/chromium), pgbouncer (/usr/sbin/pgbouncer)");
    expect(message).toContain("apt-get install -y --no-install-recommends chromium pgbouncer");
    expect(message).toContain("no apt-get here");
  });
});

describe("the test command", () => {
  const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

  it("is the README's, runs the setup step first, and is exactly what .ci/run calls last", () => {
    const readme = read("README.md");
    const tests = readme.slice(readme.indexOf("## Tests"));
    const command = /```sh\n([^\n]+)\n```/.exec(tests)?.[1];
    expect(command).toBe("npm ci && npm test");
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.pretest).toContain("scripts/test-setup.ts");
    const ci = read(".ci/run")
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
    expect(ci.at(-1)).toBe(command);
    // The setup step owns the system packages: CI does not install them behind its back.
    expect(ci.join("\n")).not.toMatch(/apt-get/);
  });
});

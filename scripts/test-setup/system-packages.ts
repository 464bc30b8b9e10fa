/**
 * The system packages the test suite needs beyond npm (test/api/*-browser.int.test.ts drive Debian's
 * chromium; test/scale/pgbouncer.int.test.ts starts Debian's pgbouncer), and what the test command's
 * setup step does about them on this machine. Pure: the machine is described by `SystemFacts`, so
 * the decision is unit-tested without running apt.
 */

export interface SystemPackage {
  /** Debian package name. */
  readonly name: string;
  /** The binary the tests run; present means installed. */
  readonly binary: string;
}

export const SYSTEM_PACKAGES: readonly SystemPackage[] = [
  { name: "chromium", binary: "/usr/bin/chromium" },
  { name: "pgbouncer", binary: "/usr/sbin/pgbouncer" },
];

export interface SystemFacts {
  /** Whether a file exists and is executable. */
  readonly hasBinary: (path: string) => boolean;
  /** Running as root (apt-get needs it). */
  readonly isRoot: boolean;
  /** apt-get is on PATH. */
  readonly hasAptGet: boolean;
}

export type SetupPlan =
  | { readonly action: "none" }
  | { readonly action: "install"; readonly commands: readonly (readonly string[])[] }
  | { readonly action: "stop"; readonly message: string };

/** The apt-get invocations that install `names`, non-interactively and without recommends. */
export function aptCommands(names: readonly string[]): string[][] {
  return [
    ["apt-get", "update"],
    ["apt-get", "install", "-y", "--no-install-recommends", ...names],
  ];
}

/**
 * Nothing to do when every package's binary exists; install the missing ones through apt when root
 * with apt-get; otherwise stop before any test with one line naming what is missing and the command
 * that installs it.
 */
export function planSystemPackages(
  facts: SystemFacts,
  packages: readonly SystemPackage[] = SYSTEM_PACKAGES,
): SetupPlan {
  const missing = packages.filter((p) => !facts.hasBinary(p.binary));
  if (missing.length === 0) return { action: "none" };
  const names = missing.map((p) => p.name);
  if (facts.isRoot && facts.hasAptGet) return { action: "install", commands: aptCommands(names) };
  const what = missing.map((p) => `${p.name} (${p.binary})`).join(", ");
  const install = `${facts.isRoot ? "" : "sudo "}apt-get install -y --no-install-recommends ${names.join(" ")}`;
  const why = facts.hasAptGet ? "" : " (no apt-get here: install them with this system's package manager)";
  return {
    action: "stop",
    message: `test setup: missing ${what}; install with: ${install}${why}`,
  };
}

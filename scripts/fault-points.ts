/**
 * `npm run fault-points`: the fault-point explorer's full form (every point × fault of every shape,
 * docs/engine.md, "The fault-point explorer"), run as the vitest integration file
 * test/fault-points/fault-points.int.test.ts so it gets the same migrated test database.
 *
 *   npm run fault-points                                   every point × fault
 *   npm run fault-points -- --only '<shape>/<point>/<fault>' replay one run (repeat --only for more)
 *   npm run fault-points -- --shapes all-settled,child      only these shapes
 *   npm run fault-points -- --report <file>                also write the printed report there
 *   npm run fault-points -- --verbose                      list every point of every shape
 */
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const env: Record<string, string> = { ...(process.env as Record<string, string>), FAULT_POINTS: "all" };
const only: string[] = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  const value = () => {
    const next = args[++i];
    if (next === undefined) usage(`${arg} needs a value`);
    return next as string;
  };
  if (arg === "--only") only.push(value());
  else if (arg === "--shapes") env.FAULT_POINTS_SHAPES = value();
  else if (arg === "--report") env.FAULT_POINTS_REPORT = value();
  else if (arg === "--verbose") env.FAULT_POINTS_VERBOSE = "1";
  else usage(`unknown argument ${arg}`);
}
if (only.length > 0) env.FAULT_POINTS_ONLY = only.join(",");

const result = spawnSync(
  "npx",
  ["vitest", "run", "--project", "integration", "test/fault-points/fault-points.int.test.ts"],
  { stdio: "inherit", env },
);
process.exit(result.status ?? 1);

function usage(problem: string): never {
  process.stderr.write(
    `${problem}\nusage: npm run fault-points -- [--only <shape>/<point>/<fault>]... [--shapes a,b] [--report file] [--verbose]\n`,
  );
  process.exit(2);
}

import { WORKLOAD_IDS, type WorkloadId } from "./workloads/types.js";

export interface BenchOptions {
  quick: boolean;
  only: WorkloadId[];
  /** Where the JSON report goes; default bench/results/latest.json. */
  out: string | null;
}

/**
 * Parses `--quick`, `--only W1,W2` (or `--only=W1,W2`) and `--out <path>`.
 * @throws Error naming the bad argument and what is accepted.
 */
export function parseBenchArgs(args: readonly string[]): BenchOptions {
  const options: BenchOptions = { quick: false, only: [...WORKLOAD_IDS], out: null };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [flag, inline] = arg.includes("=") ? (arg.split("=", 2) as [string, string]) : [arg, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--quick") options.quick = true;
    else if (flag === "--full") options.quick = false;
    else if (flag === "--only") {
      const ids = value()
        .split(",")
        .map((s) => s.trim().toUpperCase())
        .filter(Boolean);
      const unknown = ids.filter((id) => !(WORKLOAD_IDS as readonly string[]).includes(id));
      if (unknown.length > 0 || ids.length === 0)
        throw new Error(
          `--only takes workload ids from ${WORKLOAD_IDS.join(",")}; got ${unknown.join(",") || "none"}`,
        );
      options.only = WORKLOAD_IDS.filter((id) => ids.includes(id));
    } else if (flag === "--out") options.out = value();
    else throw new Error(`unknown argument ${arg}; use --quick, --only W1,W2, --out <path>`);
  }
  return options;
}

/**
 * `node --import tsx scripts/test-durations.ts [report] [count]`: the slowest test files of the last
 * run, from the JSON report vitest writes (vitest.config.ts), with their share of the run's total.
 * Where the suite's time goes is the first thing to read before trimming it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
  status: string;
}

/** The report's files, slowest first, as lines of seconds, share of the total, status and path. */
export function slowestFiles(
  report: { testResults: FileResult[] },
  count: number,
  root = process.cwd(),
): string[] {
  const files = report.testResults
    .map((f) => ({
      name: path.relative(root, f.name),
      seconds: (f.endTime - f.startTime) / 1000,
      status: f.status,
    }))
    .sort((a, b) => b.seconds - a.seconds);
  const total = files.reduce((sum, f) => sum + f.seconds, 0);
  return [
    `${files.length} files, ${total.toFixed(0)} s of file time`,
    ...files.slice(0, count).map((f) => {
      const share = ((100 * f.seconds) / total).toFixed(1).padStart(5);
      return `${f.seconds.toFixed(1).padStart(8)} s ${share} %  ${f.status.padEnd(7)} ${f.name}`;
    }),
  ];
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const [reportPath = "test-results/vitest.json", countText = "25"] = process.argv.slice(2);
  const count = Number(countText);
  if (!Number.isInteger(count) || count < 1) {
    process.stderr.write(`count must be a positive integer, got ${JSON.stringify(countText)}\n`);
    process.exit(2);
  }
  const report = JSON.parse(readFileSync(reportPath, "utf8")) as { testResults: FileResult[] };
  process.stdout.write(`${slowestFiles(report, count).join("\n")}\n`);
}

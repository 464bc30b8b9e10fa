import { parseArgs } from "node:util";
import { type CommandIo, EXIT } from "./cli-io.js";
import { type DoctorDeps, runDoctorChecks } from "./doctor-checks.js";
import { renderTable } from "./table.js";

export const DOCTOR_USAGE = `  tenor doctor [--json]                    checks Redis, PostgreSQL, shard count, migrations, workflow
                                           registrations of unfinished runs and chain RPCs; exit 1 on a failure
`;

/** `tenor doctor`: every check, a table (or JSON), exit 1 when any check fails (warnings pass). */
export async function runDoctorCommand(
  args: readonly string[],
  deps: DoctorDeps,
  io: CommandIo,
): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { json: { type: "boolean" } }, strict: true });
  const checks = await runDoctorChecks(deps);
  const ok = checks.every((c) => c.status !== "fail");
  if (values.json) io.stdout(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
  else
    io.stdout(
      renderTable(
        ["CHECK", "STATUS", "DETAIL"],
        checks.map((c) => [c.name, c.status.toUpperCase(), c.detail]),
      ),
    );
  return ok ? EXIT.OK : EXIT.FAILED;
}

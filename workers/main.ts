import { startProcessTelemetry } from "../src/observability/process-telemetry.js";

// Tracing starts before the roles' modules load, so its instrumentations see http, express and pg.
const telemetry = await startProcessTelemetry(process.env);
if (telemetry instanceof Error) {
  process.stderr.write(`tenor: ${telemetry.message}\n`);
  process.exit(2);
}
const [{ runRoleProcess }, { startApiWorker }, { startIndexerWorker }, { startRunnerWorker }] =
  await Promise.all([
    import("../src/roles/role-process.js"),
    import("./api.js"),
    import("./indexer.js"),
    import("./runner.js"),
  ]);

/** The one entry point of every Tenor process; DAPI_ROLE selects the role. */
await runRoleProcess(
  {
    env: process.env,
    stderr: (text) => process.stderr.write(text),
    exit: (code) => telemetry.flushThen(() => process.exit(code)),
    onSignal: (signal, handler) => process.on(signal, handler),
  },
  { api: startApiWorker, runner: startRunnerWorker, indexer: startIndexerWorker },
);

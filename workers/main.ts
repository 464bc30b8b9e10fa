import { runRoleProcess } from "../src/roles/role-process.js";
import { startApiWorker } from "./api.js";
import { startIndexerWorker } from "./indexer.js";
import { startRunnerWorker } from "./runner.js";

/** The one entry point of every Tenor process; DAPI_ROLE selects the role. */
await runRoleProcess(
  {
    env: process.env,
    stderr: (text) => process.stderr.write(text),
    exit: (code) => process.exit(code),
    onSignal: (signal, handler) => process.on(signal, handler),
  },
  { api: startApiWorker, runner: startRunnerWorker, indexer: startIndexerWorker },
);

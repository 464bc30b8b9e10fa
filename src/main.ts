import { runRoleProcess } from "./roles/role-process.js";

/** The one entry point of every Tenor process; DAPI_ROLE selects the role. */
await runRoleProcess({
  env: process.env,
  stderr: (text) => process.stderr.write(text),
  exit: (code) => process.exit(code),
  onSignal: (signal, handler) => process.on(signal, handler),
});

import { canonicalHash } from "../engine/canonical-json.js";

/** SHA-256 of a command name and its canonical (key-sorted) JSON input. */
export function hashCommand(command: string, input: unknown): string {
  return canonicalHash({ command, input });
}

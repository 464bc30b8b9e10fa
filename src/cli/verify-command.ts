import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { verifyEvidence } from "../api/evidence/evidence-chain.js";
import { type CommandIo, EXIT, UsageError } from "./cli-io.js";

/** `tenor verify <file>`: offline, needs neither the database nor the api. */
export async function runVerifyCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { "key-id": { type: "string" }, json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const file = positionals[0];
  if (!file) throw new UsageError("name the evidence file: tenor verify <file>");
  const keyId = values["key-id"];
  if (keyId !== undefined && !/^[0-9a-f]{64}$/i.test(keyId)) {
    throw new UsageError(
      `--key-id must be 64 hex characters (the export's signature.keyId), got ${JSON.stringify(keyId)}`,
    );
  }
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new UsageError(`cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  const verdict = verifyEvidence(document, keyId);
  if (values.json) io.stdout(`${JSON.stringify(verdict, null, 2)}\n`);
  else if (verdict.ok)
    io.stdout(`ok: ${verdict.records} records, chain intact, signed by key ${verdict.keyId}\n`);
  else io.stdout(`NOT VALID:\n${verdict.problems.map((p) => `  - ${p}\n`).join("")}`);
  return verdict.ok ? EXIT.OK : EXIT.FAILED;
}

import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { ApiClient } from "./api-client.js";
import { answerPrinter, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { renderFields, renderTable } from "./table.js";

/** One holder's credit as the mint route takes it: an address and whole tokens as decimal text. */
export interface MintHolderLine {
  address: string;
  amount: string;
}

/** The mint's execution as the API answers it (Execution in the OpenAPI document), the fields shown. */
interface StartedMint {
  id: string;
  workflow: string;
  status: string;
}

/**
 * `tenor assets mint` (docs/assets.md, "Minting"): mints an active asset of the key's organisation
 * to holders through `POST /v1/assets/{id}/mints` (issuer or admin; audited by the API, refusals
 * included). The Idempotency-Key is required, as the API requires it: running the same command
 * again with the same key answers the same mint and mints nothing more. The API checks every
 * holder against the token's decimals and names the field it refuses; the CLI only reads the
 * command line and the holders file.
 */
export async function runAssetsCommand(
  args: readonly string[],
  api: ApiClient,
  io: CommandIo,
): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      json: { type: "boolean" },
      holder: { type: "string", multiple: true },
      holders: { type: "string" },
      "idempotency-key": { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  if (action !== "mint")
    throw new UsageError(
      action ? `unknown assets command ${JSON.stringify(action)}` : "name an assets command",
    );
  const [assetId, ...extra] = positionals;
  if (!assetId) throw new UsageError("assets mint needs the asset's id");
  if (extra.length > 0) throw new UsageError(`assets mint takes one asset id, got ${positionals.length}`);
  const key = values["idempotency-key"];
  if (!key)
    throw new UsageError(
      "assets mint needs --idempotency-key <key>: run again with the same key and the same mint answers, never a second one",
    );
  const holders = [
    ...(values.holder ?? []).map(holderFlag),
    ...(values.holders === undefined ? [] : await holdersFile(values.holders)),
  ];
  if (holders.length === 0)
    throw new UsageError(
      "assets mint needs holders: --holder <address>=<amount> (repeatable) or --holders <file>",
    );
  const { body, headers } = await api.postAnswer<StartedMint>(
    `/v1/assets/${encodeURIComponent(assetId)}/mints`,
    { holders },
    { "idempotency-key": key },
  );
  const replayed = headers.get("idempotent-replayed") === "true";
  answerPrinter(io, values.json)(
    body,
    () =>
      renderFields([
        [
          replayed ? "already started" : "mint started",
          `execution ${body.id} (${body.workflow}, ${body.status})`,
        ],
        ["asset", assetId],
        ["idempotency key", key],
        ["follow", `tenor runs get ${body.id}`],
      ]) +
      "\n" +
      renderTable(
        ["HOLDER", "AMOUNT"],
        holders.map((h) => [h.address, h.amount]),
      ),
  );
  return EXIT.OK;
}

/** `--holder 0xabc…=1250.5`: the address, then whole tokens after the first `=`. */
function holderFlag(text: string): MintHolderLine {
  const at = text.indexOf("=");
  if (at <= 0 || at === text.length - 1)
    throw new UsageError(
      `--holder ${JSON.stringify(text)} must be <address>=<amount>, such as 0xabc…=1250.5`,
    );
  return { address: text.slice(0, at).trim(), amount: text.slice(at + 1).trim() };
}

/**
 * The holders of a file: a JSON array of `{ "address", "amount" }` (`.json`), otherwise one
 * `address,amount` a line (blank lines and lines starting with `#` skipped).
 */
async function holdersFile(file: string): Promise<MintHolderLine[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`--holders ${file} cannot be read: ${(error as Error).message}`);
  }
  if (file.endsWith(".json")) return jsonHolders(file, text);
  const lines: MintHolderLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const cells = line.split(",").map((cell) => cell.trim());
    if (cells.length !== 2 || !cells[0] || !cells[1])
      throw new UsageError(
        `--holders ${file} line ${i + 1} must be <address>,<amount>, got ${JSON.stringify(raw)}`,
      );
    lines.push({ address: cells[0], amount: cells[1] });
  });
  return lines;
}

function jsonHolders(file: string, text: string): MintHolderLine[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--holders ${file} is not JSON: ${(error as Error).message}`);
  }
  const valid =
    Array.isArray(parsed) &&
    parsed.every(
      (h) =>
        typeof h === "object" &&
        h !== null &&
        typeof (h as MintHolderLine).address === "string" &&
        typeof (h as MintHolderLine).amount === "string",
    );
  if (!valid)
    throw new UsageError(
      `--holders ${file} must hold a JSON array of {"address": "0x…", "amount": "1250.5"} (amounts as strings)`,
    );
  return (parsed as MintHolderLine[]).map(({ address, amount }) => ({ address, amount }));
}

import { parseArgs } from "node:util";
import type { ApiClient } from "./api-client.js";
import { answerPrinter, type CommandIo, EXIT, UsageError } from "./cli-io.js";
import { renderFields, renderTable } from "./table.js";

/** One tracked contract as the API answers it (TrackedContract in the OpenAPI document). */
interface TrackedContractView {
  chainId: number;
  address: string;
  kind: string;
  fromHeight: string;
  removedHeight: string | null;
}

/**
 * `tenor contracts add|list` (docs/ledger-index.md, "Adding a contract"): the organisation's Ledger
 * Index scope through the Platform API. `add` is the admin's and audited by the API, which checks
 * the chain, the height against the node's head, the code at the address and duplicates.
 */
export async function runContractsCommand(
  args: readonly string[],
  api: ApiClient,
  io: CommandIo,
): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      json: { type: "boolean" },
      chain: { type: "string" },
      from: { type: "string" },
      kind: { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const print = answerPrinter(io, values.json);
  switch (action) {
    case "add": {
      const chain = chainId(values.chain, action);
      const [address, ...extra] = positionals;
      if (!address) throw new UsageError("contracts add needs the contract's address");
      if (extra.length > 0)
        throw new UsageError(`contracts add takes one address, got ${positionals.length}`);
      if (values.from === undefined)
        throw new UsageError("contracts add needs --from <height>: the first block whose logs count");
      const body = await api.post<TrackedContractView>(`/v1/chains/${chain}/tracked-contracts`, {
        address,
        fromHeight: values.from,
        ...(values.kind === undefined ? {} : { kind: values.kind }),
      });
      print(body, () =>
        renderFields([
          ["tracking", `${body.address} (${body.kind}) on chain ${body.chainId}`],
          ["from block", body.fromHeight],
        ]),
      );
      return EXIT.OK;
    }
    case "list": {
      const chain = chainId(values.chain, action);
      if (positionals.length > 0) throw new UsageError("contracts list takes no positional argument");
      const body = await api.get<{ items: TrackedContractView[] }>(`/v1/chains/${chain}/tracked-contracts`);
      print(body, () =>
        renderTable(
          ["ADDRESS", "KIND", "FROM BLOCK"],
          body.items.map((c) => [c.address, c.kind, c.fromHeight]),
        ),
      );
      return EXIT.OK;
    }
    default:
      throw new UsageError(
        action ? `unknown contracts command ${JSON.stringify(action)}` : "name a contracts command",
      );
  }
}

function chainId(value: string | undefined, action: string): number {
  if (value === undefined) throw new UsageError(`contracts ${action} needs --chain <chain id>`);
  if (!/^[1-9][0-9]{0,9}$/.test(value))
    throw new UsageError(`--chain ${JSON.stringify(value)} is not a chain id (a positive integer)`);
  return Number(value);
}

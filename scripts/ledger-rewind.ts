/**
 * `node --import tsx scripts/ledger-rewind.ts --chain <id> --to <height>` (in the image:
 * `node dist/scripts/ledger-rewind.js ...`): rewinds a chain's Ledger Index to `height` under the
 * chain shard's current owner epoch, the way out of LEDGER_REORG_TOO_DEEP (docs/ledger-index.md,
 * "Rewinding a chain"). Reads the same configuration as the roles (TENOR_CONFIG, DATABASE_URL,
 * ...). Prints the result as one JSON line. Exit 0 when rewound, 2 on bad input or any refusal.
 */
import { ChainClients } from "../src/chain/rpc-clients.js";
import { loadConfig } from "../src/config/load-config.js";
import { TenorError } from "../src/errors/tenor-error.js";
import { ChainReader } from "../src/ledger-index/chain-reader.js";
import { rewindChain } from "../src/ledger-index/rewind.js";
import { PgLedgerIndex } from "../src/ledger-index/store/chain-checkpoint.js";
import { createLogger } from "../src/observability/logger.js";
import { createPgPool } from "../src/store/pg-pool.js";

const USAGE = "usage: ledger-rewind --chain <chain id> --to <block height>";

function argument(name: string): string {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? process.argv[at + 1] : undefined;
  if (value === undefined || !/^\d{1,20}$/.test(value))
    throw new TenorError<string>(
      "USAGE",
      `--${name} = ${value ?? "(missing)"}: must be a decimal integer. ${USAGE}`,
    );
  return value;
}

let code = 0;
try {
  const chainId = Number(argument("chain"));
  const height = BigInt(argument("to"));
  const config = loadConfig({ env: process.env });
  const chains = new ChainClients(config);
  const chain = chains.get(chainId);
  const pool = createPgPool(config.databaseUrl, { max: 2, applicationName: "ledger-rewind" });
  try {
    const result = await rewindChain(
      new PgLedgerIndex(pool),
      new ChainReader(chain.public, chain.config.finality),
      { chainId, height, shardCount: config.durable.sharding.shardCount },
      createLogger({ level: "warn" }),
    );
    process.stdout.write(
      `${JSON.stringify({ chainId, from: result.from.toString(), to: result.to.toString(), logs: result.logs })}\n`,
    );
  } finally {
    await pool.end();
  }
} catch (error) {
  code = 2;
  const what = error instanceof TenorError ? `${error.code}: ${error.message}` : String(error);
  process.stderr.write(`ledger-rewind: ${what}\n`);
}
process.exit(code);

import { KEYS_USAGE } from "./keys-command.js";

/** Usage of every `tenor` command; kept apart from the commands so printing it loads none of them. */

export const RUNS_USAGE = `  tenor runs list [--workflow <name>] [--status <s,...>] [--code <CODE>] [--key <key>] [--idempotency-key <key>]
                  [--created-after <iso>] [--created-before <iso>] [--parent <id>] [--include-children]
                  [--limit <n>] [--cursor <c>] [--json]
                                           --status: running, waiting, suspended, completed, failed, or held
                                           --code: a failure's or hold's code (CANCELLED, NON_DETERMINISM)
                                           top-level runs only, unless --include-children;
                                           --parent: the child runs of <id>
  tenor runs get <id> [--json]             status, what it waits for and until when, failure and guidance,
                                           input and output (their size for keys without payload access),
                                           parent, children, signals delivered, votes and
                                           audit entries (operator, admin)
  tenor runs steps <id> [--json]           the journal as a timeline with durations (a timer's real length)
  tenor runs history <id> > <file>         the recorded history (journal, workflow version, input, ending)
                                           as JSON, for \`tenor replay\` (operator, admin)
  tenor runs evidence <id> > <file>        the signed evidence export as JSON, for \`tenor verify\`
                                           (operator, admin)
  tenor runs signal <id> <name> [--payload <json>] [--idempotency-key <key>] [--json]
  tenor runs approve <id> <approval> [--reject] [--reason <text>] [--json]
                                           votes on the parameters the run asks approval for (shown first)
  tenor runs cancel <id> [--reason <text>] [--json]
                                           cooperative cancel; the run ends failed CANCELLED, naming your
                                           key and the reason (1–2000 characters)
  tenor runs resume <id> [--json]          a suspended or held run: retry now
  tenor runs pause <id> [--reason <text>] [--json]
                                           the run finishes its current step and takes no new turn
                                           until unpaused, across restarts (operator, admin)
  tenor runs unpause <id> [--json]         a paused run goes on from where it stopped
  tenor runs reset <id> --position <n> --reason <text> [--idempotency-key <key>] [--json]
                                           a held, suspended or failed run goes on from position n on
                                           the newest version; later positions are set aside, kept
`;

export const COMPAT_USAGE = `  tenor compat --against <module or directory> [--json] [--timeout-ms <n>]
                                           replays every unfinished execution's journal against another
                                           build's workflows; exit 1 when any would break (docs/console.md)
`;

export const VERIFY_USAGE = `  tenor verify <evidence file> [--key-id <hex sha-256>] [--json]
                                           checks an evidence export's hash chain and Ed25519 signature;
                                           --key-id pins the signing key; exit 1 when anything is wrong
`;

export const REPLAY_USAGE = `  tenor replay <file or directory>... [--against <module or directory>] [--json] [--timeout-ms <n>]
                                           replays recorded histories (tenor runs history) against this
                                           build's workflows, or another's, without a database; prints the
                                           first divergence of each (position, recorded, new); exit 1 on any
`;

export const DOCTOR_USAGE = `  tenor doctor [--json]                    checks Redis, PostgreSQL, shard count, migrations, workflow
                                           registrations of unfinished runs, live runners for every workflow,
                                           shard owners and chain RPCs; exit 1 on a failure
`;

export const SCHEDULES_USAGE = `  tenor schedules list [--json]            every runner schedule: state, cadence, next run, last run,
                                           pause (platform keys)
  tenor schedules status [--json]          the same, from the platform status (organisation operators too)
  tenor schedules pause <name> [--json]    its ticks do nothing until resumed, across restarts (platform-admin)
  tenor schedules resume <name> [--json]
  tenor schedules trigger <name> [--json]  one tick now, through a runner, under the window's cycle key
`;

export const CONTRACTS_USAGE = `  tenor contracts add <address> --chain <id> --from <height> [--kind <kind>] [--json]
                                           tracks a contract already on chain in the organisation's
                                           Ledger Index from block <height> (admin; audited); kind:
                                           erc20 (default), price-feed, price-resolver, system-settings
  tenor contracts list --chain <id> [--json]
                                           the contracts the organisation tracks on the chain
`;

export const ASSETS_USAGE = `  tenor assets mint <asset id> --idempotency-key <key> (--holder <address>=<amount>... | --holders <file>) [--json]
                                           mints an active asset to holders in one mintBatch (issuer, admin;
                                           audited); amounts in whole tokens; <file>: a JSON array of
                                           {address, amount} (.json) or address,amount lines; the same key
                                           again answers the same mint and mints nothing more
`;

export const OPS_USAGE = `  tenor ops create --action cancel|resume|signal|pause|unpause|reset-to-version
                  [--workflow <name>] [--version <n>] [--status <s,...>]
                  [--code <CODE>] [--key <key>] [--created-after <iso>] [--created-before <iso>]
                  [--reason <text>] [--signal <name> [--payload <json>]] [--dry-run] [--json]
                                           acts on every run the filter matches now (at least one filter;
                                           --dry-run only counts); the runners work through it in batches
  tenor ops list [--limit <n>] [--cursor <c>] [--json]
  tenor ops get <id> [--json]              progress: succeeded, failed, pending; who created or aborted it
  tenor ops failures <id> [--json]         the runs the action was refused for, with their codes
  tenor ops abort <id> [--json]            the batch in progress finishes; the rest is left untouched
`;

export const RUNNERS_USAGE = `  tenor runners [--json]                   live runners and indexers: heartbeat, shards owned, turns in
                                           use, workflows served; shards without an owner
`;

export const USAGE = `Usage: tenor <command> (npm run tenor -- <command>)

Through the Platform API (TENOR_API_URL, TENOR_API_KEY):
${RUNS_USAGE}${OPS_USAGE}${CONTRACTS_USAGE}${ASSETS_USAGE}${SCHEDULES_USAGE}${RUNNERS_USAGE}
Directly on the database (DATABASE_URL; doctor also REDIS_URL and the role configuration):
${KEYS_USAGE.replace(/^Usage:\n/, "").replaceAll("npm run tenor --", "tenor")}${DOCTOR_USAGE}${COMPAT_USAGE}
Offline:
${VERIFY_USAGE}${REPLAY_USAGE}
Human tables by default; --json prints what scripts need. Exit codes: 0 done, 1 failed or refused, 2 usage.
`;

/** Each command's own usage, printed for `tenor <command> [...] --help` and for its usage errors. */
export const COMMAND_USAGE: Readonly<Record<string, string>> = {
  runs: RUNS_USAGE,
  contracts: CONTRACTS_USAGE,
  assets: ASSETS_USAGE,
  ops: OPS_USAGE,
  schedules: SCHEDULES_USAGE,
  runners: RUNNERS_USAGE,
  keys: KEYS_USAGE.replace(/^Usage:\n/, "").replaceAll("npm run tenor --", "tenor"),
  doctor: DOCTOR_USAGE,
  compat: COMPAT_USAGE,
  verify: VERIFY_USAGE,
};

/** `command`'s usage under a `Usage:` line; the whole usage for an unknown or missing command. */
export function usageOf(command: string | undefined): string {
  const own = command === undefined ? undefined : COMMAND_USAGE[command];
  return own === undefined
    ? USAGE
    : `Usage:\n${own}\nExit codes: 0 done, 1 failed or refused, 2 usage. \`tenor --help\` lists every command.\n`;
}

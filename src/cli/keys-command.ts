import { parseArgs } from "node:util";
import { issueApiKey } from "../api/auth/api-key.js";
import { ORG_ROLES, type OrgRole, PLATFORM_ROLES } from "../auth/api-roles.js";
import type { ApiKeyRecord, PgApiKeys } from "../store/pg-api-keys.js";
import type { PgAudit } from "../store/pg-audit.js";
import { type CommandIo, UsageError } from "./cli-io.js";

export const KEYS_USAGE = `Usage:
  npm run tenor -- keys create --org <org> --role <${ORG_ROLES.join("|")}> --subject <who> [--name <label>]
  npm run tenor -- keys create --platform --role <platform-operator|platform-admin> --subject <who> [--name <label>]
      Issues a key and prints it once on stdout (only its SHA-256 is stored). --subject names the
      person or system the key is issued to (alice@acme): approvals count distinct subjects.
  npm run tenor -- keys list [--org <org>]
  npm run tenor -- keys revoke <key id>
`;

/** The stores the keys command writes, built by the CLI's entry (`cli.ts`) over its pool. */
export interface KeysCommandStores {
  keys: PgApiKeys;
  audit: PgAudit;
}

/** `tenor keys ...`; returns the exit code. The key itself goes to stdout alone, metadata to stderr. */
export async function runKeysCommand(
  args: readonly string[],
  stores: KeysCommandStores,
  io: CommandIo,
): Promise<number> {
  const [action, ...rest] = args;
  const { keys } = stores;
  const { values, positionals } = parseArgs({
    args: [...rest],
    options: {
      org: { type: "string" },
      platform: { type: "boolean" },
      role: { type: "string" },
      subject: { type: "string" },
      name: { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  switch (action) {
    case "create": {
      const { key, record } = await issueApiKey(keys, createRequest(values));
      await audit(stores.audit, "key.issue", record, "accepted");
      io.stderr(
        `Issued key ${record.id} (${record.name}) to ${record.subject} for ${record.orgId === null ? "the platform" : `org ${record.orgId}`}, role ${record.role}. It is shown once; store it now.\n`,
      );
      io.stdout(`${key}\n`);
      return 0;
    }
    case "list": {
      for (const k of await keys.list(values.org)) {
        io.stdout(
          `${k.id}  ${k.orgId ?? "(platform)"}  ${k.role.padEnd(17)}  ${k.subject}  ${k.name}  created ${k.createdAt}${k.revokedAt ? `  revoked ${k.revokedAt}` : ""}\n`,
        );
      }
      return 0;
    }
    case "revoke": {
      const id = positionals[0];
      if (!id || !/^[0-9a-f-]{36}$/i.test(id)) throw new UsageError("name the key id to revoke");
      const revoked = await keys.revoke(id);
      if (!revoked) {
        io.stderr(`no live key ${id}\n`);
        return 1;
      }
      await audit(stores.audit, "key.revoke", revoked, "accepted");
      io.stderr(`revoked ${id}\n`);
      return 0;
    }
    default:
      throw new UsageError(action ? `unknown keys command ${JSON.stringify(action)}` : "name a keys command");
  }
}

const NAME = /^[A-Za-z0-9_.@+-]{1,200}$/;

function createRequest(values: {
  org?: string;
  platform?: boolean;
  role?: string;
  subject?: string;
  name?: string;
}) {
  if (!values.subject || !NAME.test(values.subject)) {
    throw new UsageError(
      "--subject is required: the person or system the key is for (1–200 of A-Z a-z 0-9 _ . @ + -)",
    );
  }
  const common = { subject: values.subject, ...(values.name ? { name: values.name } : {}) };
  if (values.platform) {
    if (values.org) throw new UsageError("--platform keys belong to no organisation: drop --org");
    const role = PLATFORM_ROLES.find((r) => r === values.role);
    if (!role) throw new UsageError(`--platform needs --role ${PLATFORM_ROLES.join(" or ")}`);
    return { orgId: null, role, ...common };
  }
  if (!values.org || !/^[A-Za-z0-9_.-]{1,100}$/.test(values.org)) {
    throw new UsageError("--org is required (or --platform): 1–100 letters, digits, '_', '.', '-'");
  }
  const role = ORG_ROLES.find((r) => r === values.role) as OrgRole | undefined;
  if (!role) throw new UsageError(`--role is required: one of ${ORG_ROLES.join(", ")}`);
  return { orgId: values.org, role, ...common };
}

/** Key issue and revoke are audited under the key concerned: the CLI acts with database access, not a key. */
async function audit(trail: PgAudit, action: "key.issue" | "key.revoke", key: ApiKeyRecord, outcome: string) {
  await trail.append({
    actorKeyId: null,
    subject: "cli",
    orgId: key.orgId,
    role: key.role,
    action,
    target: key.id,
    requestId: null,
    outcome,
  });
}

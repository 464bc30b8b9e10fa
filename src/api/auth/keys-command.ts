import { parseArgs } from "node:util";
import type { Pool } from "pg";
import { API_ROLES, type ApiRole, PgApiKeys } from "../../store/pg-api-keys.js";
import { issueApiKey } from "./api-key.js";

export const KEYS_USAGE = `Usage:
  npm run tenor -- keys create --org <org> --role <integrator|approver|operator|admin> [--name <holder>]
      Issues a key and prints it once on stdout (only its SHA-256 is stored).
  npm run tenor -- keys list [--org <org>]
  npm run tenor -- keys revoke <key id>
`;

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A mistake on the command line: exit code 2 with the usage. */
export class UsageError extends Error {}

/** `tenor keys ...`; returns the exit code. The key itself goes to stdout alone, metadata to stderr. */
export async function runKeysCommand(args: readonly string[], pool: Pool, io: CommandIo): Promise<number> {
  const [action, ...rest] = args;
  const keys = new PgApiKeys(pool);
  const { values, positionals } = parseArgs({
    args: [...rest],
    options: { org: { type: "string" }, role: { type: "string" }, name: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  switch (action) {
    case "create": {
      if (!values.org || !/^[A-Za-z0-9_.-]{1,100}$/.test(values.org)) {
        throw new UsageError("--org is required: 1–100 letters, digits, '_', '.', '-'");
      }
      if (!values.role || !(API_ROLES as readonly string[]).includes(values.role)) {
        throw new UsageError(`--role is required: one of ${API_ROLES.join(", ")}`);
      }
      const { key, record } = await issueApiKey(keys, {
        orgId: values.org,
        role: values.role as ApiRole,
        ...(values.name ? { name: values.name } : {}),
      });
      io.stderr(
        `Issued key ${record.id} (${record.name}) for org ${record.orgId}, role ${record.role}. It is shown once; store it now.\n`,
      );
      io.stdout(`${key}\n`);
      return 0;
    }
    case "list": {
      for (const k of await keys.list(values.org)) {
        io.stdout(
          `${k.id}  ${k.orgId}  ${k.role.padEnd(10)}  ${k.name}  created ${k.createdAt}${k.revokedAt ? `  revoked ${k.revokedAt}` : ""}\n`,
        );
      }
      return 0;
    }
    case "revoke": {
      const id = positionals[0];
      if (!id || !/^[0-9a-f-]{36}$/i.test(id)) throw new UsageError("name the key id to revoke");
      if (!(await keys.revoke(id))) {
        io.stderr(`no live key ${id}\n`);
        return 1;
      }
      io.stderr(`revoked ${id}\n`);
      return 0;
    }
    default:
      throw new UsageError(action ? `unknown keys command ${JSON.stringify(action)}` : "name a keys command");
  }
}

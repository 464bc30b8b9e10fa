import { TenorError } from "../errors/tenor-error.js";
import { CONFIG_ERRORS } from "./config-error-codes.js";

/** The three roles (docs/architecture.md, "Roles"). There is no combined role. */
export const ROLES = ["api", "runner", "indexer"] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_ENV = "DAPI_ROLE";

/** Reads DAPI_ROLE; a missing or unknown value is an error naming the allowed values. */
export function parseRole(value: string | undefined): Role {
  if (value !== undefined && (ROLES as readonly string[]).includes(value)) return value as Role;
  const shown = value === undefined || value === "" ? "(missing)" : JSON.stringify(value);
  throw new TenorError(
    CONFIG_ERRORS.ROLE_INVALID,
    `${ROLE_ENV} = ${shown}: must be one of ${ROLES.join(", ")} (each process runs exactly one role; there is no combined role)`,
    { details: { key: ROLE_ENV, value: value ?? null, allowed: [...ROLES] } },
  );
}

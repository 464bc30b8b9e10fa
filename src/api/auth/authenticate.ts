import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ApiRole } from "../../auth/api-roles.js";
import type { ApiKeyRecord, PgApiKeys } from "../../store/pg-api-keys.js";
import { API_ERRORS } from "../api-error-codes.js";
import { apiError } from "../problem.js";
import { hashApiKey } from "./api-key.js";
import { PERMISSIONS, type Permission, roleMay } from "./permissions.js";

/** Who is calling: the API key, its organisation (null for platform keys), its role and subject. */
export interface Principal {
  keyId: string;
  orgId: string | null;
  role: ApiRole;
  name: string;
  /** The person or system the key was issued to. */
  subject: string;
}

/** A principal of an organisation role: what every /v1 route except the platform status serves. */
export type OrgPrincipal = Principal & { orgId: string };

export function toPrincipal(record: ApiKeyRecord): Principal {
  return {
    keyId: record.id,
    orgId: record.orgId,
    role: record.role,
    name: record.name,
    subject: record.subject,
  };
}

/**
 * Authenticates every request with `Authorization: Bearer <key>`: the key's SHA-256 must name a
 * live key. The principal is kept in `res.locals.principal`; the key itself is never logged.
 */
export function authenticate(keys: PgApiKeys): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      next(apiError(API_ERRORS.UNAUTHENTICATED, "send an API key as `Authorization: Bearer <key>`"));
      return;
    }
    try {
      const record = await keys.findActiveByHash(hashApiKey(match[1] as string));
      if (!record) {
        next(apiError(API_ERRORS.UNAUTHENTICATED, "the API key is unknown or revoked"));
        return;
      }
      res.locals.principal = toPrincipal(record);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The caller of an organisation route. Only organisation roles pass the permission checks of those
 * routes (src/api/auth/permissions.ts), so the organisation is always set; a platform key got 403.
 */
export function principalOf(res: Response): OrgPrincipal {
  const principal = res.locals.principal as Principal;
  if (principal.orgId === null)
    throw new Error(`platform key ${principal.keyId} reached an organisation route`);
  return principal as OrgPrincipal;
}

/** The caller of a route both organisation and platform keys may use. */
export function anyPrincipalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}

/** Refuses with 403 unless the caller's role has `permission`. */
export function requirePermission(permission: Permission): RequestHandler {
  return (_req, res, next) => {
    const { role } = anyPrincipalOf(res);
    if (roleMay(role, permission)) {
      next();
      return;
    }
    next(
      apiError(
        API_ERRORS.FORBIDDEN,
        `role ${role} may not ${permission}; allowed: ${PERMISSIONS[permission].join(", ")}`,
        {
          role,
          permission,
          allowedRoles: [...PERMISSIONS[permission]],
        },
      ),
    );
  };
}

/** Authentication, then the permission check: the head of every protected route. */
export function guard(keys: PgApiKeys, permission: Permission): RequestHandler[] {
  return [authenticate(keys), requirePermission(permission)];
}

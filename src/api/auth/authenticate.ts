import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ApiRole, PgApiKeys } from "../../store/pg-api-keys.js";
import { API_ERRORS } from "../api-error-codes.js";
import { apiError } from "../problem.js";
import { hashApiKey } from "./api-key.js";
import { PERMISSIONS, type Permission, roleMay } from "./permissions.js";

/** Who is calling: the API key, its organisation and its role. */
export interface Principal {
  keyId: string;
  orgId: string;
  role: ApiRole;
  name: string;
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
      const principal: Principal = {
        keyId: record.id,
        orgId: record.orgId,
        role: record.role,
        name: record.name,
      };
      res.locals.principal = principal;
      next();
    } catch (error) {
      next(error);
    }
  };
}

export function principalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}

/** Refuses with 403 unless the caller's role has `permission`. */
export function requirePermission(permission: Permission): RequestHandler {
  return (_req, res, next) => {
    const { role } = principalOf(res);
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

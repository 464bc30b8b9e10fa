/**
 * The roles an API key acts in (README, "API keys and roles"): the vocabulary the key store
 * persists, the API's permissions grant and the `keys` command issues. It sits below all three
 * and depends on nothing, so none of them has to reach into another for it.
 */

/** The roles that act inside one organisation (README, "API keys and roles"). */
export const ORG_ROLES = ["integrator", "approver", "operator", "admin", "issuer"] as const;
/** The roles that operate the platform's queues (Bull Board) and belong to no organisation. */
export const PLATFORM_ROLES = ["platform-operator", "platform-admin"] as const;
/** Every role an API key can act in: the `ApiRole` enum of prisma/schema.prisma. */
export const API_ROLES = [...ORG_ROLES, ...PLATFORM_ROLES] as const;
export type OrgRole = (typeof ORG_ROLES)[number];
export type PlatformRole = (typeof PLATFORM_ROLES)[number];
export type ApiRole = (typeof API_ROLES)[number];

export function isPlatformRole(role: string): role is PlatformRole {
  return (PLATFORM_ROLES as readonly string[]).includes(role);
}

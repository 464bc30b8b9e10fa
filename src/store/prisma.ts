import { PrismaPg } from "@prisma/adapter-pg";
import type { Pool } from "pg";
import { PrismaClient } from "../generated/prisma/client.js";

/** PrismaPg's pool parameter: adapter-pg bundles a newer @types/pg than the project's, same runtime pg. */
type AdapterPool = Extract<ConstructorParameters<typeof PrismaPg>[0], { options: unknown }>;

export type { PrismaClient };

const clients = new WeakMap<Pool, PrismaClient>();

/**
 * Prisma Client over the process's own pg pool: the ordinary repositories (API keys, audit,
 * schedules' summaries, ...) use it, typed from prisma/schema.prisma, and share the pool's
 * connections and limits with the raw statements of the hot path (docs/performance.md, "Prisma on
 * the hot path"). One client per pool; the pool's owner ends the pool, the client holds nothing else.
 */
export function prismaFor(pool: Pool): PrismaClient {
  let client = clients.get(pool);
  if (!client) {
    client = new PrismaClient({ adapter: new PrismaPg(pool as unknown as AdapterPool) });
    clients.set(pool, client);
  }
  return client;
}

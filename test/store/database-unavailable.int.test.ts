import { createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUnavailableReason } from "../../src/store/database-unavailable.js";
import { quoteIdentifier } from "../../src/store/migrations/database-url.js";
import { prismaFor } from "../../src/store/prisma.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { freePort } from "../support/ports.js";

/**
 * What the pg driver, pg-pool and Prisma (over @prisma/adapter-pg) really throw when no connection
 * can be had, classified by src/store/database-unavailable.ts: every error here is made by the real
 * libraries against a real server (or a real closed port, or a real silent listener), so a change
 * of their messages or codes fails this file, not production.
 */
let db: TestDatabase;
let limitedRole: string;
let silent: Server;
let silentPort: number;
const sockets: Socket[] = [];
const pools: pg.Pool[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  limitedRole = `${db.name}_none`;
  await db.pool.query(`CREATE ROLE ${quoteIdentifier(limitedRole)} LOGIN CONNECTION LIMIT 0`);
  // Takes TCP connections and never answers: a server that does not finish the handshake.
  silent = createServer((socket) => void sockets.push(socket));
  silentPort = await freePort();
  await new Promise<void>((resolve) => silent.listen(silentPort, "127.0.0.1", resolve));
});

afterAll(async () => {
  await Promise.allSettled(pools.map((pool) => pool.end()));
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent?.close(resolve));
  await db?.pool.query(`DROP ROLE IF EXISTS ${quoteIdentifier(limitedRole)}`).catch(() => undefined);
  await db?.drop();
});

function poolFor(url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 300, ...options });
  pool.on("error", () => undefined);
  pools.push(pool);
  return pool;
}

function asUser(user: string): string {
  const url = new URL(db.url);
  url.username = user;
  return url.toString();
}

/** The errors of one failing pool, through pg and through Prisma's model and raw paths. */
async function thrownBy(pool: pg.Pool): Promise<unknown[]> {
  const prisma = prismaFor(pool);
  return Promise.all([
    pool.query("SELECT 1").then(
      () => null,
      (error: unknown) => error,
    ),
    prisma.apiKey.findMany().then(
      () => null,
      (error: unknown) => error,
    ),
    prisma.$queryRaw`SELECT 1`.then(
      () => null,
      (error: unknown) => error,
    ),
  ]);
}

describe("databaseUnavailableReason", () => {
  it("names the server's refusal at its connection limit (SQLSTATE 53300)", async () => {
    const errors = await thrownBy(poolFor(asUser(limitedRole)));
    expect(errors.map(databaseUnavailableReason)).toEqual(Array(3).fill("too_many_connections"));
  });

  it("names a pool whose every connection stays busy past its connection timeout", async () => {
    const pool = poolFor(db.url);
    const held = await pool.connect();
    try {
      const errors = await thrownBy(pool);
      expect(errors.map(databaseUnavailableReason)).toEqual(Array(3).fill("pool_timeout"));
    } finally {
      held.release();
    }
  });

  it("names a refused connection and a server that never finishes the handshake as unreachable", async () => {
    const closed = `postgresql://postgres@127.0.0.1:${await freePort()}/postgres`;
    const refused = await thrownBy(poolFor(closed));
    expect(refused.map(databaseUnavailableReason)).toEqual(Array(3).fill("unreachable"));
    const unanswered = await poolFor(`postgresql://postgres@127.0.0.1:${silentPort}/postgres`)
      .query("SELECT 1")
      .catch((error: unknown) => error);
    expect(databaseUnavailableReason(unanswered)).toBe("unreachable");
  });

  it("names a host whose every address refused as unreachable, as Node gathers them", async () => {
    // Node reports one error per address of a host with several (::1 and 127.0.0.1 for
    // localhost) in an AggregateError without a syscall; these are two real refusals.
    const [first] = await thrownBy(poolFor(`postgresql://postgres@127.0.0.1:${await freePort()}/postgres`));
    const [second] = await thrownBy(poolFor(`postgresql://postgres@127.0.0.1:${await freePort()}/postgres`));
    const gathered = Object.assign(new AggregateError([first, second]), { code: "ECONNREFUSED" });
    expect(databaseUnavailableReason(gathered)).toBe("unreachable");
    const mixed = new AggregateError([first, new Error("certificate has expired")]);
    expect(databaseUnavailableReason(mixed)).toBeNull();
  });

  it("leaves alone a failed statement and a connection lost mid-statement: they may have run", async () => {
    const pool = poolFor(db.url, { connectionTimeoutMillis: 5_000 });
    const failed = await pool.query("SELEC 1").catch((error: unknown) => error);
    expect((failed as { code?: string }).code).toBe("42601");
    const client = await pool.connect();
    // The server's FATAL rejects the running query, and the socket's end that follows reaches the
    // checked-out client as an 'error' event, which the pool's listener does not cover.
    client.on("error", () => undefined);
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const sleeping = client.query("SELECT pg_sleep(30)").catch((error: unknown) => error);
    await db.pool.query("SELECT pg_terminate_backend($1)", [rows[0]?.pid]);
    const lost = await sleeping;
    client.release(true);
    expect(lost).toBeInstanceOf(Error);
    expect([failed, lost, new Error("boom"), "text", null].map(databaseUnavailableReason)).toEqual(
      Array(5).fill(null),
    );
  });
});

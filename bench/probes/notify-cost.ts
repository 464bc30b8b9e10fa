/**
 * Probe behind the choice of how runners announce finished executions (docs/performance.md,
 * "Results are pushed"): commits per second of a one-row status update, 16 in flight, as is,
 * with `pg_notify` inside the transaction (LISTEN/NOTIFY), and with a Redis PUBLISH after the
 * commit (awaited here, which the runner does not even do). Three interleaved rounds, medians.
 *
 * Usage: node --import tsx bench/probes/notify-cost.ts
 * Env: BENCH_DATABASE_URL (server URL, default postgresql://postgres@127.0.0.1:5432/postgres),
 *      BENCH_REDIS_URL (default redis://127.0.0.1:6379). Creates and drops its own database.
 */
import { Redis } from "ioredis";
import pg from "pg";

const serverUrl = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const DATABASE = `tenor_notify_probe_${process.pid}`;
const IN_FLIGHT = 16;
const PER_ROUND = 3_200;
const ROWS = 10_000;
const VARIANTS = ["plain", "notify", "publish"] as const;
type Variant = (typeof VARIANTS)[number];

const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${DATABASE}`);
const url = new URL(serverUrl);
url.pathname = `/${DATABASE}`;
const pool = new pg.Pool({ connectionString: url.toString(), max: IN_FLIGHT });
const listener = new pg.Client({ connectionString: url.toString() });
// DROP DATABASE ... WITH (FORCE) at the end terminates what is still connected: expected.
pool.on("error", () => undefined);
listener.on("error", () => undefined);
const redis = new Redis(redisUrl);
const subscriber = new Redis(redisUrl);
try {
  await pool.query("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)");
  await pool.query(`INSERT INTO t SELECT g, 0 FROM generate_series(1, ${ROWS}) g`);
  // Someone listens on both channels, as an api replica would.
  await listener.connect();
  await listener.query("LISTEN finished");
  await subscriber.subscribe("probe:finished");
  let next = 0;
  const round = async (variant: Variant): Promise<number> => {
    const began = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = 0; i < PER_ROUND / IN_FLIGHT; i++) {
          const id = (next++ % ROWS) + 1;
          const client = await pool.connect();
          try {
            await client.query("BEGIN");
            await client.query("UPDATE t SET v = v + 1 WHERE id = $1", [id]);
            if (variant === "notify") await client.query("SELECT pg_notify('finished', $1)", [String(id)]);
            await client.query("COMMIT");
          } finally {
            client.release();
          }
          if (variant === "publish") await redis.publish("probe:finished", String(id));
        }
      }),
    );
    return PER_ROUND / ((performance.now() - began) / 1000);
  };
  const rates: Record<Variant, number[]> = { plain: [], notify: [], publish: [] };
  for (let r = 0; r < 3; r++) for (const variant of VARIANTS) rates[variant].push(await round(variant));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] as number;
  const plain = median(rates.plain);
  const result = Object.fromEntries(
    VARIANTS.map((v) => [
      v,
      { commitsPerSec: Math.round(median(rates[v])), ofPlain: median(rates[v]) / plain },
    ]),
  );
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await Promise.allSettled([pool.end(), listener.end()]);
  redis.disconnect();
  subscriber.disconnect();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.end();
}
